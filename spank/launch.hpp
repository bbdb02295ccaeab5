// What task_init does with a plan, per shape (the plan itself comes from
// plan_step, common/ddp/plan/step_plan.hpp).
#pragma once

#include <string>
#include <vector>

#include "ddp/node/port_claim.hpp"
#include "ddp/wire/node_plan.hpp"
#include "slurm.hpp"

namespace ddp::spank {

// Batch shape: MASTER_ADDR, MASTER_PORT, DDP_NNODES, DDP_NPROC_PER_NODE into
// the batch script's environment.
Status export_batch_env(spank_t sp, const NodePlan& plan);

// Task shape: this task becomes one worker (environment contract and binding).
Status become_worker(spank_t sp, const NodePlan& plan);

// Node 0, from user_init (slurmstepd): a PortRange the kernel also hands out
// as ephemeral source ports works until an outgoing connection takes a step's
// port; slurmd's log says so at every step (ddp/plan/ports.hpp). Not the
// user's terminal: only the admin can fix it.
void note_port_range(const NodePlan& plan);

// Task shape, node 0, from user_init: MASTER_PORT claimed on node 0
// (ddp/node/port_claim.hpp); slurmstepd holds the claim for the step's life.
// Every node derives the port on its own here (no agent tells them another),
// so a port another step holds is an error, not a move: the agent shape moves
// past it. Other nodes: an empty claim.
Result<PortClaim> claim_task_master_port(const NodePlan& plan);

// Agent shape: the task becomes ddp-agent. Slurm 23.11 and later: prepended to
// the task's command (returns Ok; slurmstepd execs it later). 22.05 and 23.02:
// exec'd here, in the task (returns only on failure).
Status launch_agent(spank_t sp, const std::string& agent_path, const NodePlan& plan);

}  // namespace ddp::spank
