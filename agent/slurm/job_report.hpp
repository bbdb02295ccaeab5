// Node 0's words with slurmctld about how the step ends, through scontrol and
// squeue like requeue.hpp (the agent links no Slurm library), each asked once
// and never blocking the loop:
//   - why Slurm stopped it: on the first terminating signal, the job's fields
//     (job_fields.hpp: scontrol's JSON, or squeue) say whether the job's time limit came (Reason=TimeLimit), the
//     job ended around the step (scancel, the batch script's end:
//     JobState=COMPLETING), or only the step was stopped (the job still
//     RUNNING: `scancel JOB.STEP`, srun interrupted); printed as the root cause.
//   - the verdict in the job's Comment, which `scontrol show job` and
//     `squeue -o %k` show and the job's own user may set: the failure's class
//     and first line after the user's own comment ("mine | ddp: ..."); read
//     from scontrol's JSON, or with `squeue -o %k` where the release has none;
//     not where the site keeps the Comment for itself (JobComment=no in
//     ddp.conf, the plan's job_comment).
// Folklore: while a job ends, scontrol shows JobState=COMPLETING whatever
// its end (the flag hides the base state, on 22.05 at least): the Reason tells a
// time limit from the rest.
#pragma once

#include <optional>
#include <string>

#include "ddp/wire/failure.hpp"
#include "ddp/wire/node_plan.hpp"
#include "node/duties/command.hpp"
#include "slurm/job_fields.hpp"

namespace ddp::agent {

// What Slurm did, from the job's fields when `sig` came.
std::string slurm_stop_text(const JobFields& job, int sig);

// The job's new Comment: the user's own (anything before an earlier " | ddp:"
// or "ddp:"; squeue -o %k says "(null)" for none), then `ours`; cut to 400
// characters.
std::string comment_with(const std::string& old_comment, const std::string& ours);

// "ddp: step 7.0: class host_oom: worker rank 3 ... at 12:00:01"
std::string verdict_comment(const RootCause& cause, const NodePlan& plan);

class JobReport {
 public:
  JobReport(const NodePlan& plan, bool standalone);
  // A terminating signal reached node 0: ask once why (not after a verdict,
  // nor when node 0 requeues the job itself).
  void on_signal(int sig);
  // Whether on_signal() asks slurmctld (node 0 of a Slurm job).
  bool explains_stops() const { return enabled_; }
  // A failed verdict: into the job's Comment.
  void on_verdict(const RootCause& cause);
  // From the loop: reads the answers, says what Slurm did, updates the Comment.
  void tick();
  // While an answer is awaited (each command is bounded: 10 s).
  bool busy() const {
    return show_job_.running() || comment_job_.running() || comment_read_.running() || comment_write_.running();
  }

 private:
  void read_stop();
  void read_comment();
  void write_comment(const std::string& old);
  bool enabled_ = false;
  NodePlan plan_;
  std::string job_;
  int stop_signal_ = 0;
  std::string comment_;  // ours, once there is a verdict
  bool writes_comment_ = true;
  ShowJob show_job_, comment_job_;  // the fields for the root cause; for the Comment
  Command comment_read_, comment_write_;  // squeue -o %k, where scontrol gives no JSON; scontrol update
};

}  // namespace ddp::agent
