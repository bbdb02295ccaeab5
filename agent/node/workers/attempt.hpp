// One attempt on this node, apart from the spec that never changes (spec.hpp):
// its number, this node's seat in the layout START gave (ranks, MASTER_*), and
// the interface that reaches its MASTER_ADDR; then how each worker of it
// starts. A spare has no attempt until a START gives it a lost node's group.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/environment.hpp"
#include "ddp/base/result.hpp"
#include "ddp/plan/worker_env.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "node/workers/run_files.hpp"
#include "node/workers/worker_group.hpp"

namespace ddp::agent {

struct Attempt {
  std::uint32_t number = 0;
  WorkerLayout layout;
  std::string ifname;  // the interface toward layout.master_addr; "" when unknown
  // The OOM killer's count in this agent's memory cgroup (the workers' too)
  // when the workers started (ddp/node/cgroup.hpp); nullopt without one.
  std::optional<std::uint64_t> oom_kills_at_start;
};

// How the spec (spec.hpp) has the workers started.
struct LaunchChoices {
  bool slurm_view = true;           // Slurm's task variables per worker (not standalone)
  bool one_gpu_per_worker = false;  // CUDA_VISIBLE_DEVICES = the worker's own GPU only
  bool progress_files = false;      // --ddp-hang-timeout: each worker gets DDP_PROGRESS_FILE
  bool requeue = false;             // --ddp-requeue on node 0: DDP_REQUEUE=1 (USR1 means save and end)
  // GPU steps with --ddp-stragglers: our NCCL profiler plugin (NCCL_PROFILER_PLUGIN,
  // unless the user set one) and each worker's DDP_NCCL_STATS_FILE; "" none.
  std::string nccl_profiler;
};

// What START means for node `node`, which can run `capacity` workers: this
// node's layout, nullopt for a spare (no workers this time), or an error when
// the layout does not fit the node.
Result<std::optional<WorkerLayout>> layout_for(const rdzv::Start& start, std::uint32_t node, std::uint32_t capacity);

// How each worker of the attempt starts: its environment (the worker
// contract, Slurm's task variables as if it were a task, its files), its GPU
// and its CPUs. Its stdout and stderr are the caller's to add. A problem that
// leaves a worker running anyway (unbound, without its files) goes to
// `warnings`.
std::vector<WorkerGroup::Launch> worker_launches(const NodePlan& plan, const LaunchChoices& choices,
                                                 const Attempt& attempt, const RunFiles& files, const Environment& base,
                                                 std::vector<std::string>& warnings);

}  // namespace ddp::agent
