// --ddp-preflight: before attempt 0, node 0 has every node time a GEMM on its
// CPUs and a transfer to node 0, and names a node far off the others, before
// a worker starts and before the job runs at that node's pace for days.
//
// The order (preflight_turns): compute checks on every host at once but one
// node per host at a time (nodes that share a machine would slow each
// other: the test cluster's nodes share two cores); then the network
// checks, one node at a time (each transfer goes to node 0, so two at once
// would share node 0's link). Each in kRounds rounds, each node's best kept:
// one slow GEMM or transfer is noise (a neighbour's burst; seen on the test
// cluster: one GEMM of four at 0.58x the others' median, on a healthy node),
// a slow node is slow every time. Node 0's own link is the other end of
// every transfer: it is not judged.
//
// The rule (judge_preflight), per measure, over the nodes with a figure
// (three at least: of two, neither can be told from the other): a node is
// named when its rate is at most the other nodes' median / 1.5 and more
// than 3 of their standard deviations below it. A node whose check failed
// or did not finish in time is named with why, unless no node's check ran
// (then the check itself is broken, not a node: one warning, no verdict).
// A node the compute check named is left out of the network's judging: its
// slow CPUs slow its sends too, and would hide another node's slow link.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddp::agent {

enum class Measure { Compute, Network };
const char* measure_name(Measure m);  // "compute", "network"

struct PreflightTurn {
  Measure measure = Measure::Compute;
  std::vector<std::uint32_t> nodes;  // checked together
  bool operator==(const PreflightTurn&) const = default;
};

inline constexpr std::uint32_t kRounds = 2;

// The turns for the nodes whose hosts are `hosts` (by node), `rounds` of
// each measure (no network turns when `network` is false). Node 0 has no
// network turn.
std::vector<PreflightTurn> preflight_turns(const std::vector<std::string>& hosts, std::uint32_t rounds, bool network);

// One node's figure for one measure: a rate (MFLOP/s, MB/s), or why none.
struct CheckResult {
  std::optional<double> rate;
  std::string failed;
  bool operator==(const CheckResult&) const = default;
};
// The better of two (the higher rate; a rate over a failure).
CheckResult best_of(const CheckResult& a, const CheckResult& b);

struct PreflightVerdict {
  std::uint32_t node = 0;
  Measure measure = Measure::Compute;
  CheckResult result;
  double others_median = 0, others_sd = 0;
  bool operator==(const PreflightVerdict&) const = default;
};

// The rule above, pure. `results`: by node.
std::vector<PreflightVerdict> judge_preflight(Measure measure, const std::map<std::uint32_t, CheckResult>& results);

// "pre-flight: node 1 (n1, 10.0.0.1) computes slowly: " and its figures:
// "its GEMM ran at 3.1 GFLOP/s, the other nodes' median 41.2 GFLOP/s (sd 1.3
// GFLOP/s): 13.3x slower (named at 1.5x the median and 3 sd below it)".
std::string preflight_text(const PreflightVerdict& v, const std::string& node_name);
std::string preflight_figures(const PreflightVerdict& v);
// The verdict as one JSON object, for scripts: {"event":"preflight",...}.
std::string preflight_json(const PreflightVerdict& v, const std::string& host);
// Every node's figure of a measure, one line (--ddp-verbose).
std::string preflight_table(Measure measure, const std::map<std::uint32_t, CheckResult>& results);

}  // namespace ddp::agent
