#include "node/duties/hang_watch.hpp"

#include <algorithm>

namespace ddp::agent {

namespace {
// How often the progress files are looked at, and how long the stalled
// workers get to print their stacks and die of SIGABRT.
constexpr std::chrono::milliseconds kCheckEvery{250};
constexpr std::chrono::seconds kReportWait{3};
}  // namespace

void HangWatch::begin_attempt(WallClock::time_point started) {
  attempt_started_ = started;
  hang_.reset();
}

void HangWatch::hold(bool held) {
  if (held_ && !held) released_ = WallClock::now();
  held_ = held;
}

bool HangWatch::check_due() {
  if (!on() || hang_ || held_ || Clock::now() < next_check_) return false;
  next_check_ = Clock::now() + kCheckEvery;
  return true;
}

std::optional<Hang> HangWatch::find(const std::vector<std::optional<Progress>>& progress) const {
  if (!on() || held_) return std::nullopt;
  // Progress older than the last release counts from it: silence while the
  // output was held was the reader's.
  return find_hang(progress, std::max(attempt_started_, released_), WallClock::now(), timeout_);
}

void HangWatch::found(Hang hang) { hang_ = Found{std::move(hang), Clock::now() + kReportWait}; }

bool HangWatch::settled(const std::vector<bool>& ended) const {
  if (!hang_) return false;
  if (Clock::now() >= hang_->report_by) return true;
  for (const auto& r : hang_->hang.stalled)
    if (r.local >= ended.size() || !ended[r.local]) return false;
  return true;
}

std::optional<std::string> HangWatch::untouched_warning_once(const std::vector<std::optional<Progress>>& progress,
                                                               std::uint32_t node_rank) {
  if (!on() || told_untouched_ || progress.empty()) return std::nullopt;
  for (const auto& p : progress)
    if (p && p->last != WallClock::time_point{}) return std::nullopt;
  told_untouched_ = true;
  return untouched_warning(node_rank, timeout_);
}

}  // namespace ddp::agent
