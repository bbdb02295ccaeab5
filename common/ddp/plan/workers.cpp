#include "ddp/plan/workers.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "ddp/base/bounds.hpp"
#include "ddp/base/parse.hpp"

namespace ddp {

Result<RankLayout> rank_layout(const std::vector<std::uint32_t>& workers_per_node, std::uint32_t node_rank) {
  if (node_rank >= workers_per_node.size())
    return fail("node rank " + std::to_string(node_rank) + " is outside the " +
                std::to_string(workers_per_node.size()) + "-node step");
  RankLayout layout;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < workers_per_node.size(); ++i) {
    if (i == node_rank) layout.rank_base = std::uint32_t(total);
    total += workers_per_node[i];
  }
  if (total > std::numeric_limits<std::int32_t>::max()) return fail("the step has more workers than ranks can count");
  layout.world_size = std::uint32_t(total);
  return layout;
}

Result<WorkerCount> resolve_task_workers(const DdpRequest& request, std::uint32_t step_gpus, std::uint32_t local_tasks,
                                         std::string_view node) {
  const std::string on = " on node " + std::string(node);
  const std::string tasks = std::to_string(local_tasks) + " tasks" + on;
  Mode mode = request.mode;
  if (mode == Mode::Auto) mode = (step_gpus > 0 || request.gpus) ? Mode::Gpu : Mode::Cpu;
  const auto count = mode == Mode::Gpu ? request.gpus : request.procs;
  if (count && *count != local_tasks)
    return fail(std::string(mode == Mode::Gpu ? "--ddp-gpus=" : "--ddp-procs=") + std::to_string(*count) +
                " disagrees with the step's " + tasks +
                "; with several tasks per node each task is one worker: "
                "drop the option, or use one task per node and let the agent start the workers");
  if (mode == Mode::Cpu) {
    if (request.gpus) return fail("--ddp-gpus asks for GPU workers but --ddp=cpu for CPU workers; drop one of them");
    return WorkerCount{Mode::Cpu, local_tasks};
  }
  if (request.procs)
    return fail("--ddp-procs sets CPU workers, but the step runs in GPU mode" + on + "; use --ddp=cpu");
  if (step_gpus == 0)
    return fail("GPU mode, but the step has no GPUs" + on +
                "; request them (e.g. --gpus-per-node=" + std::to_string(local_tasks) +
                ") or run CPU workers with --ddp=cpu");
  if (local_tasks > step_gpus)
    return fail("more workers than GPUs: " + tasks + " but only " + std::to_string(step_gpus) +
                " GPU(s); use --ntasks-per-node=" + std::to_string(step_gpus) + " or request more GPUs");
  return WorkerCount{Mode::Gpu, local_tasks};
}

Status check_task_gpu_view(std::size_t visible_gpus, std::uint32_t local_rank, std::uint32_t local_tasks,
                           bool one_gpu_per_worker) {
  if (visible_gpus != 1 || local_tasks < 2 || one_gpu_per_worker) return Ok{};
  const auto example = std::to_string(std::max<std::uint32_t>(local_rank, 1));
  return fail("each task sees only its own GPU (CUDA_VISIBLE_DEVICES narrowed by --gpus-per-task or --gpu-bind), so "
              "cuda:LOCAL_RANK (cuda:" + example + " for LOCAL_RANK=" + example +
              ") does not exist; request GPUs per node instead (--gpus-per-node=" + std::to_string(local_tasks) +
              ": every task sees them all and cuda:LOCAL_RANK is its own), or, if the script uses cuda:0, "
              "set SDDP_ONE_GPU_PER_WORKER=1");
}

Result<WorkerCount> resolve_workers(const DdpRequest& request, std::uint32_t step_gpus, std::string_view node) {
  Mode mode = request.mode;
  if (mode == Mode::Auto) mode = (step_gpus > 0 || request.gpus) ? Mode::Gpu : Mode::Cpu;
  const std::string on = " on node " + std::string(node);

  if (mode == Mode::Cpu) {
    if (request.gpus) return fail("--ddp-gpus asks for GPU workers but --ddp=cpu for CPU workers; drop one of them");
    return WorkerCount{Mode::Cpu, request.procs.value_or(1)};
  }
  if (request.procs)
    return fail("--ddp-procs sets CPU workers, but the step runs in GPU mode" + on +
                "; use --ddp=cpu --ddp-procs=N, or --ddp-gpus=N for GPU workers");
  if (step_gpus == 0)
    return fail("GPU mode, but the step has no GPUs" + on +
                "; request them (e.g. --gpus-per-node=N) or run CPU workers with --ddp=cpu");
  if (request.gpus && *request.gpus > step_gpus)
    return fail("--ddp-gpus=" + std::to_string(*request.gpus) + " but the step has only " + std::to_string(step_gpus) +
                " GPU(s)" + on + "; request more (e.g. --gpus-per-node=" + std::to_string(*request.gpus) +
                ") or lower --ddp-gpus");
  return WorkerCount{Mode::Gpu, request.gpus.value_or(step_gpus)};
}

Result<std::vector<std::uint32_t>> parse_tasks_per_node(std::string_view text) {
  std::vector<std::uint32_t> counts;
  const std::string what = "SLURM_STEP_TASKS_PER_NODE=" + printable(text, 80);
  text = trim(text);
  if (text.empty()) return fail(what + " is empty");
  for (auto item : split_list(text)) {
    std::uint64_t repeat = 1;
    if (const auto paren = item.find("(x"); paren != std::string_view::npos) {
      if (item.back() != ')') return fail(what + ": malformed repeat");
      auto r = parse_uint(item.substr(paren + 2, item.size() - paren - 3), 1, 1u << 20, what);
      if (!r) return fail(r.error());
      repeat = *r;
      item = item.substr(0, paren);
    }
    auto n = parse_uint(item, 1, kMaxWorkersPerNode, what);  // every node of a step runs a task
    if (!n) return fail(n.error());
    if (counts.size() + repeat > (1u << 20)) return fail(what + ": too many nodes");
    counts.insert(counts.end(), repeat, std::uint32_t(*n));
  }
  return counts;
}

}  // namespace ddp
