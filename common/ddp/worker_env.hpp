// The worker contract: the environment torchrun gives each worker, so that
// PyTorch scripts written for torchrun (init_method="env://") run unmodified.
#pragma once

#include <cstdint>
#include <string>

#include "ddp/environment.hpp"
#include "ddp/plan.hpp"

namespace ddp {

struct WorkerSlot {
  std::uint32_t local_rank = 0;
  std::uint32_t restart_count = 0;  // the same on every node (torchrun: per agent)
};

// `base` is the agent's own environment (the job's); the result is the worker's.
// Variables the contract owns (RANK, WORLD_SIZE, MASTER_*, TORCHELASTIC_*, ...)
// are always overwritten; variables a user may tune (OMP_NUM_THREADS,
// TORCH_NCCL_ASYNC_ERROR_HANDLING, GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME) are set
// only when absent. `socket_ifname` is the interface that reaches MASTER_ADDR
// (empty: unknown, leave the libraries to guess). The plan variables
// (DDP_PLAN_*) are removed: they are the agent's, not the worker's.
Environment worker_environment(const Environment& base, const NodePlan& plan, const WorkerSlot& slot,
                               const std::string& socket_ifname);

}  // namespace ddp
