// The bad nodes of a step (taken out for cause), as node 0's agent reports them to its
// slurmstepd (ddp/wire/bad_node_report.hpp: the lines; the agent's writer is
// agent/slurm/bad_node_reporter.cpp). Read once, as root, when the step ends
// (slurm_spank_exit), for two uses: the requeued job's ExcNodeList
// (requeue_exclusion.hpp) and the site's BadNodeHook (bad_node_hook.hpp).
//
// The channel: in init_post_opt (root) node 0's slurmstepd of every --ddp
// step makes a FIFO in a root-owned directory (kReportDir), gives it to the
// job's user, and keeps its read end open; the agent writes one line per bad
// node (DDP_PLAN_BAD_NODE_REPORT names it). A FIFO, not a file: the
// user's processes can write to it as much as they like and never hold more
// than the pipe's 64 KiB of the node's memory, and nothing is left on disk.
// What is in the pipe outlives the agent: a line written before Slurm kills
// it is read all the same.
//
// The content comes from the user's processes, so it is a claim, never a
// fact: a line is accepted only for a node of the step as slurmctld has it
// (not as the job's environment says), its reason made plain text.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "ddp/wire/bad_node_report.hpp"
#include "slurm.hpp"

namespace ddp::spank {

inline constexpr const char* kReportDir = "/run/slurm-ddp";

struct ReportFifo {
  std::string path;
  int fd = -1;             // the read end, slurmstepd's
  std::string step_nodes;  // the step's nodes as slurmctld had them at its start ("": it did not tell)
};

// Node 0, root, as the step starts: the FIFO for this step, owned by the
// job's user, mode 0600, and the step's nodes from slurmctld, which a report
// is checked against. Asked now: at the step's end, in slurm_spank_exit,
// slurmctld may no longer list the step (24.11 at times does not), and its
// bad nodes would then be neither reported nor kept out of a requeue.
Result<ReportFifo> make_report_fifo(std::uint32_t job, std::uint32_t step, uid_t uid, gid_t gid);

// The job as slurmctld has it when the step ends.
struct JobRecord {
  std::string id;         // for an update: "JOBID", or "ARRAYJOBID_TASKID" (this task only)
  std::string exc_nodes;  // its ExcNodeList ("" for none)
  bool pending = false;   // pending again: requeued while this step ran
};

struct BadNodes {
  std::string where;  // "job 7.0 (user alice)", for slurmd's log
  uid_t uid = 0;
  std::string user;  // its name, or the uid when it has none
  std::uint32_t job = 0, step = 0;
  JobRecord record;
  std::vector<BadNode> nodes;  // accepted: nodes of the step, each once
};

// slurm_spank_exit, root: what the agent wrote, checked against the step's
// nodes (make_report_fifo's; asked again if it had none), with the job's
// record (slurm_load_job); removes the FIFO. Empty nodes when there was no
// bad node (slurmctld is not asked then). Refused lines go to slurmd's
// log as one line (refused_summary); an error only when slurmctld did not
// answer.
Result<BadNodes> read_bad_nodes(spank_t sp, ReportFifo& fifo);

}  // namespace ddp::spank
