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
// of this step, with a reason of plain text; the hook is told who claimed it
// and never drains a node by itself.
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

// The line the agent appends, newline included.
std::string bad_node_line(const BadNode& bad);

inline constexpr std::size_t kMaxReportBytes = 64 * 1024;  // more is read no further
inline constexpr std::size_t kMaxReasonChars = 300;

struct BadNodeReport {
  std::vector<BadNode> nodes;         // accepted, each node once (its first line)
  std::vector<std::string> refused;   // one message per refused line, for slurmd's log
};

// The report's text, every line checked: well formed, a node that
// `in_step` knows, a reason of printable ASCII of kMaxReasonChars at most.
BadNodeReport read_bad_node_report(std::string_view text, const std::function<bool(const std::string&)>& in_step);

}  // namespace ddp
