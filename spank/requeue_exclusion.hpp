// Node 0's slurmstepd, as the step ends (slurm_spank_exit, root): a job that
// is pending again (requeued: by node 0's agent for --ddp-requeue, or by
// Slurm or an admin) gets the bad nodes of the
// step (blamed twice, a straggler swapped, a failed HealthCheck) added to its
// ExcNodeList, so that its next run does not start on them.
//
// Why here and not in the agent, which runs the requeue: Slurm changes
// ExcNodeList only while the job is pending (job_mgr.c, _update_job:
// ESLURM_JOB_NOT_PENDING), that is after the requeue, and the requeue ends
// the step at once. The batch step gets Slurm's SIGTERM, and srun, on
// SIGTERM, forwards SIGKILL to its step ("forcing job termination",
// srun_job.c, 22.05 to 26.05): node 0's agent may die before an update it
// starts reaches slurmctld. slurmstepd outlives its tasks, and the job
// cannot start again before this returns: slurmstepd calls slurm_spank_exit
// before it reports the step complete, and the scheduler starts no requeued
// job while a step of its last run remains (job_scheduler.c,
// _job_runnable_test1, the same in 22.05, 24.11 and 26.05).
//
// As root, through Slurm's API (no scontrol from a PATH): the job is the one
// this slurmstepd runs, the nodes are those of its allocation that the
// report names (bad_node_fifo.hpp), the list is the job's own ExcNodeList
// as slurmctld has it plus those; the user could set as much on their own
// pending job.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bad_node_fifo.hpp"

namespace ddp::spank {

// The ExcNodeList to set: `excluded` (the job's, "" for none) with each of
// `nodes` not in it already appended; nullopt when every node is in it.
std::optional<std::string> excluded_with(const std::string& excluded, const std::vector<std::string>& nodes);

// Sets it when the job is pending again; says what it did, or why not, in
// slurmd's log.
void exclude_from_requeue(const BadNodes& report);

}  // namespace ddp::spank
