#include "ddp/plan/step_env.hpp"

#include <numeric>

#include "ddp/base/parse.hpp"
#include "ddp/plan/workers.hpp"

namespace ddp {

namespace {

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  if (trim(list).empty()) return out;
  for (const auto item : split_list(list)) out.emplace_back(trim(item));
  return out;
}

}  // namespace

Status read_step_env(StepFacts& f, bool batch, const EnvLookup& env) {
  f.partition = env("SLURM_JOB_PARTITION").value_or("");
  if (!batch) {
    if (const auto per_node = env("SLURM_STEP_TASKS_PER_NODE")) {
      auto counts = parse_tasks_per_node(*per_node);
      if (!counts) return fail(counts.error());
      f.tasks_per_node = std::move(counts).value();
    }
    if (f.tasks_per_node.size() != f.nodes.size()) f.tasks_per_node.assign(f.nodes.size(), f.local_tasks);
    // A heterogeneous step (srun A : B) is one step per component, each with
    // its own job id and node indices, while the step's variables describe all
    // components together: the components' agents would never agree on node 0
    // and the rendezvous would time out. Slurm 22.05 has no spank item for the
    // component, so it shows as task counts that do not add up.
    if (env("SLURM_HET_SIZE") &&
        std::accumulate(f.tasks_per_node.begin(), f.tasks_per_node.end(), std::uint64_t(0)) != f.total_tasks)
      return fail(
          "--ddp cannot run a heterogeneous step (srun ... : ...): each component is a step of its own; give "
          "--ddp to one srun of one component (in a heterogeneous job: srun --het-group=N --ddp ...)");
  }
  f.step_gpus = split_commas(env(batch ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS").value_or(""));
  f.visible_gpus = split_commas(env("CUDA_VISIBLE_DEVICES").value_or(""));
  f.local_rank_set = env("LOCAL_RANK").has_value();
  if (const auto wait = env("SLURM_DDP_KILL_WAIT"))
    if (const auto s = parse_uint(*wait, 0, 65535, "SLURM_DDP_KILL_WAIT")) f.kill_wait = std::chrono::seconds(*s);
  return Ok{};
}

}  // namespace ddp
