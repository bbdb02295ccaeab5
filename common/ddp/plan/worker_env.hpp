// The worker contract: the environment torchrun gives each worker, so that
// PyTorch scripts written for torchrun (init_method="env://") run unmodified.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/environment.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

// Where a node's workers stand in one attempt: their ranks and where they
// meet. The plugin plans attempt 0 (planned_layout: the task shape, where
// Slurm starts each worker, uses it as it is); in the agent shape every
// attempt's comes from the rendezvous' START, since a spare may take over a
// lost node's ranks and the step may shrink (agent/node/workers/attempt.hpp).
struct WorkerLayout {
  std::uint32_t restart_count = 0;  // the attempt, the same on every node (torchrun: per agent)
  std::uint32_t nproc = 1;          // this node's workers: LOCAL_WORLD_SIZE
  std::uint32_t rank_base = 0;      // the global rank of local rank 0
  std::uint32_t world_size = 1;
  std::uint32_t group_rank = 0;  // GROUP_RANK: this node's place among the nodes that run workers
  std::uint32_t groups = 1;      // GROUP_WORLD_SIZE
  std::vector<std::uint32_t> workers_per_group;  // in group order (the agent shape's Slurm view); empty in the plan's
  std::string master_addr;
  std::uint16_t master_port = 0;
  bool operator==(const WorkerLayout&) const = default;
};

// Attempt 0 as the plugin planned it.
WorkerLayout planned_layout(const NodePlan& plan);

// `base` is the agent's own environment (the job's); the result is the worker's.
// Variables the contract owns (RANK, WORLD_SIZE, MASTER_*, TORCHELASTIC_*, ...)
// are always overwritten; variables a user may tune (OMP_NUM_THREADS,
// TORCH_NCCL_ASYNC_ERROR_HANDLING, GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME) are set
// only when absent. `socket_ifname` is the interface that reaches MASTER_ADDR
// (empty: unknown, leave the libraries to guess). The plan variables
// (DDP_PLAN_*) are removed: they are the agent's, not the worker's.
Environment worker_environment(const Environment& base, const NodePlan& plan, const WorkerLayout& layout,
                               std::uint32_t local_rank, const std::string& socket_ifname);

// The agent shape under Slurm: srun started one task per node, the agent, and
// Slurm's task variables describe that task. Rewritten for each worker as if
// srun had started one task per worker, because submitit, Lightning's
// SLURMEnvironment, Megatron and others compute ranks from them:
// SLURM_PROCID = RANK, SLURM_LOCALID = LOCAL_RANK, SLURM_NTASKS, SLURM_NPROCS
// and SLURM_STEP_NUM_TASKS = WORLD_SIZE, SLURM_NTASKS_PER_NODE = this node's
// workers, SLURM_TASKS_PER_NODE and SLURM_STEP_TASKS_PER_NODE in Slurm's
// format ("3(x2)"), SLURM_GTIDS = this node's ranks, SLURM_NODEID =
// GROUP_RANK and SLURM_NNODES = SLURM_STEP_NUM_NODES = GROUP_WORLD_SIZE
// (Slurm's values, except after a spare took a lost node's place or the step
// shrank: --ddp-spares, --ddp-min-nodes). The PMI and PMIx
// variables (PMI_*, PMIX_*, SLURM_PMIX_*) name the node's one task to an MPI
// library and would lie to every worker: removed.
void apply_slurm_worker_view(Environment& env, const WorkerLayout& layout, std::uint32_t local_rank);

// Slurm's compressed task counts: {3, 3, 2} -> "3(x2),2".
std::string slurm_tasks_per_node(const std::vector<std::uint32_t>& counts);

}  // namespace ddp
