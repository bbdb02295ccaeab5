// --ddp-preflight: before attempt 0, node 0 has every node time a GEMM on its
// CPUs and send to other nodes, and names a node far off the others, before
// a worker starts and before the job runs at that node's pace for days.
//
// The order (preflight_turns): compute checks on every host at once but one
// node per host at a time (nodes that share a machine would slow each
// other). Then the network checks, a ring each round: node i sends to node
// i + s (mod N), s = N/2 in the first round, 1 in the second, so every node
// sends to and receives from two different nodes, node 0 too. Every transfer
// of a round runs at once, but a host sends at most one and receives at most
// one at a time (nodes of one machine take turns): 2 turns of transfers for
// 16,384 nodes on their own machines, not one per node. Each in kRounds
// rounds, each node's best kept: one slow GEMM or transfer is noise (a
// neighbour's burst can slow a healthy node's GEMM well below the others'
// median), a slow node is slow every time. A transfer is as slow as the
// slower of its two ends: a node with a slow link is slow in both its
// transfers out (or in), its partners in one of theirs only, and the best of
// two hides that one. So a node's network figure is the slower of its best
// transfer out and its best transfer in (link_result).
//
// A node the GEMM rule would name for its rate (not for a failure) gets one
// more GEMM, alone on its host, before it is named (confirmation_turns): a
// burst on a shared host can outlast both rounds of a healthy node, which is
// at the others' rate again once it is over. A slow node is slow a third time.
//
// The rule (judge_preflight), per measure, over the nodes with a figure
// (three at least: of two, neither can be told from the other): a node is
// named when its rate is at most the other nodes' median / 1.5 (a GEMM) or
// / 2 (a link) and more than 3 of their standard deviations below it, or at
// most a tenth of their median whatever their spread. A node whose check failed
// or did not finish in time is named with why, unless no node's check ran
// (then the check itself is broken, not a node: one warning, no verdict).
// A node the compute check named is left out of the network's judging: its
// slow CPUs slow its transfers (a node held to 15% of a CPU sends at a
// fraction of the others' rate), and would hide another node's slow link.
// Its partners' transfers with it are slow too, once each: the best of two
// hides that.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddp::agent {

enum class Measure { Compute, Network };
const char* measure_name(Measure m);  // "compute", "network"

struct Transfer {
  std::uint32_t from = 0, to = 0;
  bool operator==(const Transfer&) const = default;
};

struct PreflightTurn {
  Measure measure = Measure::Compute;
  std::vector<std::uint32_t> nodes;  // compute: checked together
  std::vector<Transfer> transfers;   // network: at once
  bool operator==(const PreflightTurn&) const = default;
};

inline constexpr std::uint32_t kRounds = 2;

// The ring's shift in each of `rounds` rounds for `nodes` nodes: N/2, 1, 2,
// ... (each distinct while N allows; two nodes have only 1).
std::vector<std::uint32_t> ring_shifts(std::size_t nodes, std::uint32_t rounds);

// The turns for the nodes whose hosts are `hosts` (by node), `rounds` of
// each measure (no network turns when `network` is false or there is one node).
std::vector<PreflightTurn> preflight_turns(const std::vector<std::string>& hosts, std::uint32_t rounds, bool network);

// One node's figure for one measure: a rate (MFLOP/s, MB/s), or why none;
// a network figure says whether it is of its transfers "out" or "in".
struct CheckResult {
  std::optional<double> rate;
  std::string failed;
  std::string side = {};  // network: "out" or "in"
  bool operator==(const CheckResult&) const = default;
};
// The better of two (the higher rate; a rate over a failure).
CheckResult best_of(const CheckResult& a, const CheckResult& b);
// A node's network figure: the worse of its best transfer out and its best
// in (a failure worse than any rate), with its side; either may be missing.
CheckResult link_result(const std::optional<CheckResult>& out, const std::optional<CheckResult>& in);
// Every node's network figure from the transfers timed (or failed).
struct TimedTransfer {
  Transfer transfer;
  CheckResult result;
};
std::map<std::uint32_t, CheckResult> link_results(const std::vector<TimedTransfer>& timed);

struct PreflightVerdict {
  std::uint32_t node = 0;
  Measure measure = Measure::Compute;
  CheckResult result;
  double others_median = 0, others_sd = 0;
  bool operator==(const PreflightVerdict&) const = default;
};

// The rule above, pure. `results`: by node.
std::vector<PreflightVerdict> judge_preflight(Measure measure, const std::map<std::uint32_t, CheckResult>& results);
// The turns that check once more the nodes `named` for a slow GEMM (hosts:
// by node, as for preflight_turns): one node per host at a time.
std::vector<PreflightTurn> confirmation_turns(const std::vector<std::string>& hosts,
                                              const std::vector<PreflightVerdict>& named);

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
