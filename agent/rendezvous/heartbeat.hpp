// How often each side of the rendezvous says it is alive: every node to node
// 0, and node 0 to every node (HEARTBEAT, an empty message; any message
// counts as one). A pure rule, the same on both sides.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ddp::agent {

// Node 0 sends one heartbeat to every node and gets one from every node in
// each interval: once a second, 2 x 16,383 messages a second at 16,384 nodes,
// and on a rendezvous that takes seconds they were about half of node 0's
// CPU (bench/scale_light.py, doc/benchmarks.md). So the interval grows with
// the nodes past this many heartbeats a second each way...
inline constexpr std::uint32_t kHeartbeatsPerSecond = 4096;

// ...but never past a third of the heartbeat timeout, so that a peer is
// declared lost only after three heartbeats in a row went missing; and never
// under a second. 4,096 nodes or fewer: once a second.
constexpr std::chrono::milliseconds heartbeat_interval(std::uint32_t nodes, std::chrono::milliseconds timeout) {
  using std::chrono::milliseconds;
  const milliseconds second{1000};
  const milliseconds by_nodes{std::int64_t(nodes) * 1000 / kHeartbeatsPerSecond};
  return std::clamp(by_nodes, second, std::max(second, timeout / 3));
}

}  // namespace ddp::agent
