// BadNodeHook= (ddp.conf(5)): the site's program, run as root on node 0 when
// a step ends, once for each node the step kept out (blamed twice, failed its
// health check, swapped after the pre-flight: doc/node-loss.md), so that the
// admin hears of it. Off unless the site names one.
//
// The verdict comes from the job's own agents, that is from the user, so it
// is handled as a claim (ddp/wire/bad_node_report.hpp): only nodes of the
// job's allocation, as slurmctld has it, with a reason of plain text; the
// hook is told who claimed it; the plugin never drains a node itself, nor
// asks slurmctld to. What the hook does (mail, a ticket, a counter, a drain
// after N reports from distinct users) is the site's policy.
//
// The channel: in init_post_opt (root) node 0's slurmstepd makes a FIFO in
// a root-owned directory (kReportDir), gives it to the job's user, and keeps
// its read end open; the agent writes one line per node kept out
// (DDP_PLAN_BAD_NODE_REPORT names it). A FIFO, not a file: the user's
// processes can write to it as much as they like and never hold more than
// the pipe's 64 KiB of the node's memory, and nothing is left on disk.
// slurm_spank_exit (root) reads what is there, runs the hook, removes it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ddp/base/result.hpp"
#include "slurm.hpp"

namespace ddp::spank {

inline constexpr const char* kReportDir = "/run/slurm-ddp";

struct ReportFifo {
  std::string path;
  int fd = -1;  // the read end, slurmstepd's
};

// Node 0, root: the FIFO for this step, owned by the job's user, mode 0600.
Result<ReportFifo> make_report_fifo(std::uint32_t job, std::uint32_t step, uid_t uid, gid_t gid);

// slurm_spank_exit, root: reads the report, runs `hook` for each node it
// accepts (10 s each at most; what it prints goes to slurmd's log), and
// removes the FIFO. Every problem goes to slurmd's log; nothing fails the step.
void run_bad_node_hook(spank_t sp, const std::string& hook, ReportFifo& fifo);

}  // namespace ddp::spank
