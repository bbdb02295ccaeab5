// The bad-node report: node 0's agent names the bad nodes of the step
// (blamed twice: agent/job/job.hpp), and the plugin, as root in
// slurmstepd when the step ends, adds them to the job's ExcNodeList if it was
// requeued and hands each to the site's BadNodeHook (ddp.conf(5)). Written
// and read here.
//
// The file is the plugin's: made by root in a root-owned directory, given to
// the job's user, read back through the descriptor the plugin kept
// (spank/bad_node_fifo.cpp). Its content comes from the user's processes, so
// it is read as a claim, never as a fact: a line is accepted only for a node
// of this step; its reason is made plain text (plain_reason) on both sides; the
// hook is told who claimed it and never drains a node by itself.
//
// One line per node: "node=NAME reasons=TEXT" with both values
// percent-encoded as in the rendezvous protocol (rdzv_protocol.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp {

struct BadNode {
  std::string node;     // Slurm's name for it (SLURMD_NODENAME)
  std::string reasons;  // "cuda_nccl in attempt 0; straggler in attempt 1"
  bool operator==(const BadNode&) const = default;
};

inline constexpr std::size_t kMaxReportBytes = 64 * 1024;  // more is read no further (32,768 lines at most)
inline constexpr std::size_t kMaxReasonChars = 300;
inline constexpr std::string_view kReasonCut = " [...]";  // ends a reason cut to kMaxReasonChars

// A reason as the report carries it, the one encoding of both sides: each
// byte outside printable ASCII (a control character, a byte of UTF-8) as
// \xNN, and kMaxReasonChars at most, a longer one cut between two characters
// of the result and ended with kReasonCut. The agent writes its reasons
// through it (bad_node_line) and root reads them through it again, so a real
// node is never refused for the words of its reason (a HealthCheck's 400
// characters, "GPU at 95 °C"). Plain text passes unchanged, so applying it
// twice gives what applying it once does.
std::string plain_reason(std::string_view reason);

// The line the agent appends, newline included; the reason through
// plain_reason.
std::string bad_node_line(const BadNode& bad);

struct BadNodeReport {
  std::vector<BadNode> nodes;  // accepted, each node once (its first line)
  std::size_t refused = 0;     // lines refused
  std::string first_refused;   // why the first of them was: "line 2: node login9 is not a node of this step"
  bool cut = false;            // larger than kMaxReportBytes: read no further
};

// The report's text, every line checked: well formed, a node that `in_step`
// knows (a reason is made plain, never refused).
BadNodeReport read_bad_node_report(std::string_view text, const std::function<bool(const std::string&)>& in_step);

// What was refused, as one line for slurmd's log however many lines the
// report had ("" when nothing was): "3 lines of node 0's report were refused
// (first: line 2: node login9 is not a node of this step)".
std::string refused_summary(const BadNodeReport& report);

}  // namespace ddp
