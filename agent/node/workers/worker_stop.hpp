// Stopping a node's workers without blocking the event loop: the first
// signal now, SIGKILL when the grace is over, and after SIGKILL at most 5 s
// for the kernel to end them (a worker stuck in uninterruptible I/O) before
// the agent goes on without them. Heartbeats, the coordinator and the
// workers' output (a checkpoint being written, its log lines) go on
// meanwhile; the lifecycle's WorkersStopped comes once the last is reaped.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "node/workers/worker_group.hpp"

namespace ddp::agent {

class WorkerStop {
 public:
  // `node` and `verbose` for its messages.
  WorkerStop(WorkerGroup& group, std::chrono::milliseconds grace, std::uint32_t node, bool verbose)
      : group_(group), grace_(grace), node_(node), verbose_(verbose) {}

  void begin(int first_signal);  // the first signal, to every worker, now
  void kill_now();               // a second terminating signal: SIGKILL, no more grace
  // From the loop, and on SIGCHLD: reaps the workers that ended; true once
  // none runs (or the ones left were given up on).
  bool done();

 private:
  using Clock = std::chrono::steady_clock;
  WorkerGroup& group_;
  std::chrono::milliseconds grace_;
  std::uint32_t node_;
  bool verbose_;
  Clock::time_point kill_at_;
  std::optional<Clock::time_point> given_up_at_;  // SIGKILL sent; wait at most until then
};

}  // namespace ddp::agent
