// What task_init does with a plan, per shape, and the planning pieces that need
// Slurm (node addresses) or the machine (hwloc).
#pragma once

#include <string>
#include <vector>

#include "ddp/plan.hpp"
#include "ddp/site_config.hpp"
#include "slurm.hpp"
#include "step.hpp"

namespace ddp::spank {

// Where each local worker runs (GPU, CPUs, NIC), from the node's topology.
// Problems (a GPU the topology does not show) are warnings: the worker runs
// unbound and the user is told why.
std::vector<WorkerPlacement> place_workers(const Settings& settings, const NodePlan& plan, const StepFacts& facts,
                                           std::vector<std::string>& warnings);

// The batch script's plan (node 0 of the job): MASTER_ADDR/PORT for launches
// written by hand. `master_addr`: node 0's address (slurmstepd.cpp looks it up).
Result<NodePlan> plan_batch(const DdpRequest& request, const Settings& settings, const StepFacts& facts,
                            const std::string& master_addr);

// Batch shape: MASTER_ADDR, MASTER_PORT, DDP_NNODES, DDP_NPROC_PER_NODE into
// the batch script's environment.
Status export_batch_env(spank_t sp, const NodePlan& plan);

// Task shape: this task becomes one worker (environment contract and binding).
Status become_worker(spank_t sp, const NodePlan& plan);

// Agent shape: the task becomes ddp-agent. Slurm 23.11 and later: prepended to
// the task's command (returns Ok; slurmstepd execs it later). 22.05 and 23.02:
// exec'd here, in the task (returns only on failure).
Status launch_agent(spank_t sp, const std::string& agent_path, const NodePlan& plan);

}  // namespace ddp::spank
