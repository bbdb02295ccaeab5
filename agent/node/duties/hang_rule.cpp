#include "node/duties/hang_rule.hpp"

#include <algorithm>
#include <array>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

std::optional<Hang> find_hang(const std::vector<std::optional<Progress>>& last_progress,
                              WallClock::time_point attempt_started, WallClock::time_point now,
                              std::chrono::milliseconds timeout) {
  Hang hang;
  bool armed_and_stalled = false;
  for (std::uint32_t local = 0; local < last_progress.size(); ++local) {
    if (!last_progress[local]) continue;  // ended well: not watched
    const Progress& p = *last_progress[local];
    const bool never = p.last == WallClock::time_point{};
    const auto last = std::max(p.last, attempt_started);
    if (now - last > timeout) {
      hang.stalled.push_back({local, last, never, never ? std::nullopt : p.step});
      armed_and_stalled |= !never;
    } else {
      hang.progressing.push_back(local);
    }
  }
  if (!armed_and_stalled) return std::nullopt;
  // Equally suspect ranks stay in local order. Not std::stable_sort: its
  // temporary buffer is deprecated in C++20, and clang 19 (the sanitizer
  // build) says so from inside libstdc++ 12.
  std::ranges::sort(hang.stalled, [](const Hang::Rank& a, const Hang::Rank& b) {
    if (more_suspect(a, b)) return true;
    if (more_suspect(b, a)) return false;
    return a.local < b.local;
  });
  return hang;
}

bool more_suspect(const Hang::Rank& a, const Hang::Rank& b) {
  if (a.never != b.never) return a.never;  // it never started while the other did
  if (a.step && b.step && *a.step != *b.step) return *a.step < *b.step;
  return a.last < b.last;
}

StalledIn where_stalled(const std::vector<std::string>& stderr_tail) {
  // Frames of the communication libraries a rank waits in for its peers.
  static constexpr std::array kCollectiveFrames = {"/torch/distributed/", "/deepspeed/comm/", "/horovod/"};
  const std::size_t dump = dump_start(stderr_tail);
  bool frames = false;
  for (std::size_t i = dump; i < stderr_tail.size(); ++i) {
    const std::string& line = stderr_tail[i];
    if (line.find("  File \"") != 0) continue;
    frames = true;
    for (const char* marker : kCollectiveFrames)
      if (line.find(marker) != std::string::npos) return StalledIn::collective;
  }
  return frames ? StalledIn::elsewhere : StalledIn::unknown;
}

std::size_t dump_start(const std::vector<std::string>& stderr_tail) {
  std::size_t dump = stderr_tail.size();
  for (std::size_t i = 0; i < stderr_tail.size(); ++i)
    if (stderr_tail[i].find("Fatal Python error: Aborted") != std::string::npos) dump = i;
  return dump;
}

std::size_t pick_culprit(const Hang& hang, const std::vector<StalledIn>& where) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < hang.stalled.size() && i < where.size(); ++i)
    if (where[i] < where[best]) best = i;  // most suspect first: ties keep the earlier
  return best;
}

std::vector<std::uint32_t> stalled_ranks(const Hang& hang, std::uint32_t rank_base) {
  std::vector<std::uint32_t> ranks;
  for (const auto& r : hang.stalled) ranks.push_back(rank_base + r.local);
  return ranks;
}

HangFacts hang_facts(const Hang& hang, std::size_t culprit, StalledIn where, std::uint32_t rank_base,
                     std::chrono::milliseconds timeout, bool survived) {
  const Hang::Rank& rank = hang.stalled[culprit];
  HangFacts facts;
  facts.timeout_ms = std::uint32_t(timeout.count());
  facts.since_ms = std::max<std::uint64_t>(epoch_ms(rank.last), 1);
  facts.where = where;
  facts.step = rank.step;
  facts.never = rank.never;
  facts.stalled = stalled_ranks(hang, rank_base);
  for (const auto local : hang.progressing) facts.progressing.push_back(rank_base + local);
  facts.survived_abort = survived;
  return facts;
}

std::string untouched_warning(std::uint32_t node_rank, std::chrono::milliseconds timeout) {
  return "node " + std::to_string(node_rank) + ": --ddp-hang-timeout=" + seconds_text(timeout) +
         " watched nothing: no worker touched its DDP_PROGRESS_FILE (the watch starts at a worker's first "
         "touch); ddp-train touches it every step, a script adds one line to its step: "
         "if p := os.environ.get(\"DDP_PROGRESS_FILE\"): pathlib.Path(p).touch()";
}

std::uint64_t epoch_ms(WallClock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  return ms > 0 ? std::uint64_t(ms) : 0;
}

}  // namespace ddp::agent
