// How often each side of the rendezvous says it is alive: every node to node
// 0, and node 0 to every node (HEARTBEAT, an empty message; any message
// counts as one, so a side sends HEARTBEAT only to a peer it has sent nothing
// for an interval: heartbeat_due). A pure rule, the same on both sides.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ddp::agent {

// Node 0 sends one heartbeat to every node and gets one from every node in
// each interval: once a second, 2 x 16,383 messages a second at 16,384 nodes,
// and on a rendezvous that takes seconds about half of node 0's CPU
// (doc/benchmarks.md). So the interval grows with the nodes past this many
// heartbeats a second each way...
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

// Whether a peer last sent something at `last_sent` is due a HEARTBEAT now.
// Any message is one, so the nodes just welcomed (WELCOME) and those told
// something else within the interval (START, LOAD...) get none: at 16,384
// nodes, a rendezvous of a few seconds then sends no heartbeat at all, where
// a broadcast every interval would add a round to every node, a quarter of
// node 0's sends (doc/benchmarks.md). And each peer's
// heartbeats fall due at its own times, not all 16,383 in one burst.
constexpr bool heartbeat_due(std::chrono::steady_clock::time_point last_sent, std::chrono::steady_clock::time_point now,
                             std::chrono::milliseconds every) {
  return now - last_sent >= every;
}

}  // namespace ddp::agent
