// How many workers each node runs, and where their ranks begin: from the
// user's request, the GPUs Slurm gave the step, and Slurm's task counts.
// Pure.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ddp/base/mode.hpp"
#include "ddp/base/result.hpp"
#include "ddp/plan/request.hpp"

namespace ddp {

// Global rank layout for heterogeneous nodes: base = running sum in node order.
struct RankLayout {
  std::uint32_t rank_base = 0;
  std::uint32_t world_size = 0;
};
Result<RankLayout> rank_layout(const std::vector<std::uint32_t>& workers_per_node, std::uint32_t node_rank);

// How many workers this node runs and in which mode, from the request and the
// GPUs Slurm gave the step on this node (SLURM_STEP_GPUS). `node` names the node
// in messages.
struct WorkerCount {
  Mode mode = Mode::Cpu;
  std::uint32_t nproc = 1;
  bool operator==(const WorkerCount&) const = default;
};
Result<WorkerCount> resolve_workers(const DdpRequest& request, std::uint32_t step_gpus, std::string_view node);

// The same for the task shape (several Slurm tasks per node, each one worker):
// the count is Slurm's `local_tasks`; options that disagree are errors, and so
// are more workers than GPUs in GPU mode.
Result<WorkerCount> resolve_task_workers(const DdpRequest& request, std::uint32_t step_gpus, std::uint32_t local_tasks,
                                         std::string_view node);

// The task shape in GPU mode, in each task: Slurm narrows a task's
// CUDA_VISIBLE_DEVICES to its own GPU for --gpus-per-task and --gpu-bind, and
// then cuda:LOCAL_RANK does not exist for LOCAL_RANK > 0 (the script's
// torch.cuda.set_device(LOCAL_RANK) fails). Refused, on every task alike, with
// the fix; `one_gpu_per_worker` (SDDP_ONE_GPU_PER_WORKER=1) says the script
// uses cuda:0, as it must when each worker sees one GPU.
Status check_task_gpu_view(std::size_t visible_gpus, std::uint32_t local_rank, std::uint32_t local_tasks,
                           bool one_gpu_per_worker);

// SLURM_STEP_TASKS_PER_NODE ("2(x3),1") expanded to one count per node: [2, 2, 2, 1].
// A node of a step runs at least one task: a count of 0 is refused.
Result<std::vector<std::uint32_t>> parse_tasks_per_node(std::string_view text);

}  // namespace ddp
