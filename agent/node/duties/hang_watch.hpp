// --ddp-hang-timeout on one node, across an attempt: when to look at the
// progress files, the hang found (its stalled ranks get SIGABRT for their
// stacks, and the report waits for them to end, 3 s at most), and node 0's
// one warning when no worker ever signalled progress. The decisions are
// hang_rule.hpp's; the effects (SIGABRT, HANGING, FAIL) are the agent's.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "node/duties/hang_rule.hpp"

namespace ddp::agent {

class HangWatch {
 public:
  explicit HangWatch(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  bool on() const { return timeout_.count() > 0; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // A new attempt's workers started at `started`.
  void begin_attempt(WallClock::time_point started);
  // The workers' output is held (a reader paused: workers/sink.hpp), so a
  // worker may be blocked on its own write: no hang is looked for meanwhile,
  // and once released every rank has a whole timeout again.
  void hold(bool held);
  // Every loop turn while the workers run: whether to look at the progress
  // files now (every 250 ms, until a hang is found).
  bool check_due();
  // A hang in the workers' progress, if there is one: at a check, and at a
  // worker's failure (ranks stalled already make the failure the hang's
  // consequence: a collective broke).
  std::optional<Hang> find(const std::vector<std::optional<Progress>>& progress) const;

  // The hang found; its stalled ranks were sent SIGABRT.
  void found(Hang hang);
  const Hang* hang() const { return hang_ ? &hang_->hang : nullptr; }
  // The report may go: every stalled rank has ended (its stack is in its
  // output; `ended[local]`), or the wait is over.
  bool settled(const std::vector<bool>& ended) const;

  // Once per run, when the attempt's workers have ended and none ever
  // touched its progress file: what node 0 says about it.
  std::optional<std::string> untouched_warning_once(const std::vector<std::optional<Progress>>& progress,
                                                    std::uint32_t node_rank);

 private:
  using Clock = std::chrono::steady_clock;
  struct Found {
    Hang hang;
    Clock::time_point report_by;
  };
  std::chrono::milliseconds timeout_;
  WallClock::time_point attempt_started_;
  WallClock::time_point released_;  // when the output was last released
  bool held_ = false;
  Clock::time_point next_check_;
  std::optional<Found> hang_;
  bool told_untouched_ = false;
};

}  // namespace ddp::agent
