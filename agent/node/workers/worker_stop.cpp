#include "node/workers/worker_stop.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kKillWait{5};
}  // namespace

void WorkerStop::begin(int first_signal) {
  kill_at_ = Clock::now() + grace_;
  given_up_at_.reset();
  group_.signal_all(first_signal);
}

void WorkerStop::kill_now() {
  group_.signal_all(SIGKILL);
  kill_at_ = Clock::now();
}

bool WorkerStop::done() {
  group_.reap();
  if (group_.running() == 0) return true;
  const auto now = Clock::now();
  if (!given_up_at_ && now >= kill_at_) {
    if (verbose_)
      spdlog::warn("node {}: {} worker(s) still running after the {} ms grace: SIGKILL", node_, group_.running(),
                   grace_.count());
    group_.signal_all(SIGKILL);
    given_up_at_ = now + kKillWait;
  } else if (given_up_at_ && now >= *given_up_at_) {
    spdlog::warn("node {}: {} worker(s) did not end {} s after SIGKILL (stuck in the kernel?); going on without them",
                 node_, group_.abandon_running(), kKillWait.count());
    return true;
  }
  return false;
}

}  // namespace ddp::agent
