// Node 0's straggler watch: every node's LOAD windows (duties/load_watch.hpp)
// side by side, and the rule that names a node holding the others back.
//
// The rule, over the nodes that run workers (two at least): a node's figure
// in a 5 s window is its busiest worker's share of it on a CPU or waiting
// for one; its mean over the last 6 windows (30 s) is judged. A node is
// named, once per attempt, when that mean is at least 60%, at least 1.5
// times the other nodes' median mean (twice, when there is one other node:
// no spread to judge its noise by), and more than 3 of their standard
// deviations above it, and its last window is at least 50% (it is slow
// now). Megatron-LM names a rank 10% and 1 sigma off the mean; we ask more:
// on nodes that share their cores single windows swing 2.5x while healthy
// and 30 s means reach 65% and 1.35x. The floors are not higher: a worker
// capped at 15% of a CPU can show anything from 57% to 90%, its main thread
// waiting on Gloo's own thread part of the time; the ratio is what tells.
// How soon: a node busy nearly all the time is named 20-30 s after it slows
// (its mean crosses before the 6 windows are all slow); one just over the
// floor and the ratio in every window when all 6 are slow, up to about
// 40 s (the window under way, 6 more, and the other nodes' LOAD of the
// last: StragglerWatch judges when every node's has come); one that dips
// under them later (61 s seen with a 20% quota), or never if its mean stays
// under 60%. Against the 60 s asked and nvidia-resiliency-ext's 60-300 s
// report interval. The first 30 s of an attempt (imports, the first
// collectives) are never judged. A window is skipped when a node's LOAD is
// late or its output is held: no verdict from half the picture.
//
// On GPUs (every node's LOAD carries its workers' time in NCCL's collectives,
// from our profiler plugin: duties/load_watch.hpp) the figure is instead a
// node's worker that spent the least of the window in collectives, as the
// share spent outside them: the slow rank's GPU arrives last and waits
// least, the others wait for it. The same rule then applies to it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_messages.hpp"

namespace ddp::agent {

// A node that runs workers in this attempt, as node 0 names it.
struct NodeSeat {
  std::uint32_t node = 0;
  std::uint32_t rank_base = 0;
  std::string name, host;  // "2 (n2, 10.0.0.2)", "n2"
  bool operator==(const NodeSeat&) const = default;
};

struct StragglerVerdict {
  std::uint32_t attempt = 0;
  NodeSeat seat;
  std::uint32_t local_rank = 0;              // its busiest worker
  std::uint32_t on_cpu = 0, waiting = 0;     // that worker's, permille, in the last window
  std::optional<std::uint32_t> throttled;    // the node's cgroup's, permille
  std::optional<std::uint32_t> in_collectives;  // GPU figures: that worker's GPU in NCCL's collectives, permille
  std::uint32_t mean_busy = 0;               // that worker's node's figure over the windows, permille
  std::uint32_t others_median = 0;           // the other nodes' figures over them, permille
  std::uint32_t windows = 0, window_ms = 0;  // in a row, each this long
  bool operator==(const StragglerVerdict&) const = default;
};

// The rule, pure: one window of every node (`loads[i]` is seats[i]'s) at a time.
class StragglerRule {
 public:
  static constexpr std::uint32_t kMinBusy = 600;     // permille, over the windows
  static constexpr std::uint32_t kMinBusyNow = 500;  // permille, in the last one
  static constexpr std::size_t kWindows = 6;
  static constexpr double kMinRatio = 1.5;       // times the other nodes' median
  static constexpr double kMinRatioOfOne = 2.0;  // times the one other node's
  void reset();
  std::vector<StragglerVerdict> judge(const std::vector<NodeSeat>& seats, const std::vector<rdzv::Load>& loads);

 private:
  std::map<std::uint32_t, std::deque<std::uint32_t>> history_;  // by node: its last kWindows figures
  std::set<std::uint32_t> named_;
  bool gpu_ = false;  // the figures in history_ are the GPU's (a change starts them again)
};

// "straggler: node 1 (n1, 10.0.0.1) holds the others back (attempt 0, ...): ..."
std::string straggler_text(const StragglerVerdict& v);
// Its figures alone: "(attempt 0, 4 windows in a row, 20 s): its rank 1 was busy ..."
std::string straggler_figures(const StragglerVerdict& v);
// The same as one JSON object, for scripts: {"event":"straggler",...}.
std::string straggler_json(const StragglerVerdict& v);

// The effects around the rule: the newest LOAD of each node, a judgement
// every window, the verdict printed (a warning and an "event:" line).
class StragglerWatch {
 public:
  // `verbose` (--ddp-verbose): every window's figures, one line each.
  explicit StragglerWatch(bool verbose = false) : verbose_(verbose) {}
  void begin_attempt(std::uint32_t attempt);
  void on_load(std::uint32_t node, const rdzv::Load& load);
  // The nodes whose LOAD of the current window has come (cheap: the
  // coordinator asks every loop turn before it builds the seats).
  std::size_t windows_in() const { return latest_.size(); }
  // While the attempt's workers run: judges once a window, when every seat's
  // LOAD of it has come; the nodes named now (printed already).
  std::vector<StragglerVerdict> tick(const std::vector<NodeSeat>& seats);

 private:
  bool verbose_ = false;
  std::uint32_t attempt_ = 0;
  std::map<std::uint32_t, rdzv::Load> latest_;  // by node, since the last judgement
  StragglerRule rule_;
};

}  // namespace ddp::agent
