// Node 0's requeue of the job (--ddp-requeue), without blocking the agent's
// event loop: `scontrol requeue JOBID`, whose answer is read when it comes.
// scontrol is Slurm's own client of the node's release and makes the
// slurm_requeue() call; the agent itself links no Slurm library, so one
// ddp-agent serves every Slurm release (and the GPU kit, which has no Slurm).
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "ddp/wire/node_plan.hpp"
#include "node/duties/command.hpp"
#include "slurm/job_fields.hpp"

namespace ddp::agent {

class Requeue {
 public:
  // Starts `scontrol requeue JOB` (scontrol from PATH, or `scontrol` set);
  // JOB as scontrol_job_name() gives it. The bad nodes are not this
  // class's: Slurm changes a job's ExcNodeList only while it is pending, that
  // is after this requeue, which ends the step; srun, given Slurm's SIGTERM,
  // forwards SIGKILL to it at once, so an update run from here may never
  // leave. Node 0's slurmstepd sets it as the step ends
  // (spank/requeue_exclusion.hpp), from the report the agent has written by
  // then (bad_node_reporter.hpp).
  Status start(const std::string& job, const std::string& scontrol = "scontrol");
  bool running() const { return scontrol_.running(); }
  // nullopt while scontrol runs; then Ok, or the failure with what scontrol
  // said. Kills a scontrol that takes longer than 30 s (and one still
  // running when the Requeue goes).
  std::optional<Status> poll();

 private:
  Command scontrol_;
  std::string job_;
};

// How long node 0 may wait for the workers after Slurm's warning: RequeueWait,
// but never past the job's end less KillWait (Slurm's SIGTERM-to-SIGKILL
// grace, which the requeue's step end needs too) and a 5 s margin; at once
// when even that has passed.
std::chrono::milliseconds requeue_wait_within(std::chrono::milliseconds wait, std::optional<std::chrono::seconds> left,
                                              std::chrono::seconds kill_wait);

// --ddp-requeue, node 0: Slurm's warning came (USR1 or USR2 from sbatch
// --signal, ahead of the time limit or a preemption); requeue the job once
// every worker has ended (saved), or when the wait is up (RequeueWait, cut to
// the time the job has left: its EndTime (job_fields.hpp), asked when the warning
// comes), then hold until Slurm's SIGTERM, so that srun does not return and
// the batch script does not go on.
class Requeuer {
 public:
  Requeuer(const NodePlan& plan, bool standalone);
  // Slurm's warning `sig` reached node 0. `over`: the run has its verdict
  // already (a warning in node 0's last second must not send a finished job
  // round again).
  void on_warning(int sig, bool over);
  // From the loop; `workers_done`: the run has its verdict. `keep_out`: the
  // Slurm names of nodes taken out of this run for cause (blamed twice, a
  // straggler swapped, a failed HealthCheck), reported to node 0's
  // slurmstepd already, which keeps them out of the requeued job: named in
  // what the requeue says.
  void tick(bool workers_done, const std::vector<std::string>& keep_out = {});
  // Node 0 must stay: scontrol still runs, or Slurm's SIGTERM is awaited after a requeue.
  bool holds() const;
  // scontrol runs: node 0 stays through Slurm's SIGTERM, which the requeue
  // brings at once, for its answer (srun's SIGKILL may come first).
  bool busy() const { return scontrol_.running(); }
  // --ddp-requeue is on for this job (the same on every node).
  bool enabled() const { return enabled_; }

 private:
  using Clock = std::chrono::steady_clock;
  void finish_scontrol();
  void read_time_left();

  bool enabled_;
  std::string job_;  // JOBID, or ARRAYJOBID_TASKID: this task only
  std::chrono::milliseconds wait_;
  std::chrono::seconds kill_wait_;
  bool armed_ = false;
  Clock::time_point warned_at_;
  Clock::time_point by_;
  bool reports_bad_nodes_;              // node 0's slurmstepd reads the bad nodes (the plan names its FIFO)
  ShowJob show_job_;                    // the job's fields, for the time left
  std::vector<std::string> bad_nodes_;  // as the requeue started
  Requeue scontrol_;
  bool done_ = false;                       // scontrol has answered (or could not start)
  std::optional<Clock::time_point> hold_until_;  // after a requeue
};

}  // namespace ddp::agent
