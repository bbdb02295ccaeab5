#include "node/workers/attempt.hpp"

#include <algorithm>

#include "ddp/node/affinity.hpp"
#include "ddp/plan/roster.hpp"
#include "ddp/wire/nccl_stats.hpp"

namespace ddp::agent {

Result<std::optional<WorkerLayout>> layout_for(const rdzv::Start& start, std::uint32_t node, std::uint32_t capacity) {
  const auto seat = seat_of(start.group_nodes, start.group_workers, node);
  if (!seat) return fail(seat.error());
  if (!*seat) return std::optional<WorkerLayout>();
  const GroupSeat& s = **seat;
  if (s.workers > capacity)
    return fail(std::to_string(s.workers) + " workers for a node that runs " + std::to_string(capacity));
  return std::optional<WorkerLayout>(WorkerLayout{start.attempt, s.workers, s.rank_base, s.world_size, s.group_rank,
                                                  s.groups, start.group_workers, start.master_addr,
                                                  start.master_port});
}

namespace {

// On GPU steps with the straggler watch, NCCL loads our profiler plugin in
// the worker, which writes its collectives' GPU time to DDP_NCCL_STATS_FILE
// (ddp/wire/nccl_stats.hpp). A user's own NCCL_PROFILER_PLUGIN wins: NCCL
// loads one, and theirs is there on purpose.
void add_nccl_stats(Environment& env, const std::string& plugin, const std::string& path,
                    std::vector<std::string>& warnings) {
  if (const auto theirs = env.get("NCCL_PROFILER_PLUGIN"); theirs && *theirs != plugin) {
    const auto said = "NCCL_PROFILER_PLUGIN=" + *theirs + " is the job's own: NCCL loads that one, so the straggler "
                      "watch sees the workers' CPU time only (unset it for GPU straggler figures)";
    if (std::find(warnings.begin(), warnings.end(), said) == warnings.end()) warnings.push_back(said);  // once
    return;
  }
  if (const auto error = create_nccl_stats_file(path)) return warnings.push_back(*error);
  env.set("NCCL_PROFILER_PLUGIN", plugin);
  env.set("DDP_NCCL_STATS_FILE", path);
}

// The worker's files: torch's @record writes its exception to
// TORCHELASTIC_ERROR_FILE (the root cause points at it); with the hang watch
// on, DDP_PROGRESS_FILE is its progress signal (ddp-train touches it every
// step; a script in one line: if p := os.environ.get("DDP_PROGRESS_FILE"): pathlib.Path(p).touch()).
void add_files(Environment& env, const LaunchChoices& choices, const Attempt& attempt, std::uint32_t rank,
               const RunFiles& files, std::vector<std::string>& warnings) {
  if (!files.made()) return;  // the agent said why when it started
  const bool watched = choices.progress_files;
  if (auto ok = files.prepare(attempt.number, rank, watched); !ok) warnings.push_back(ok.error());
  env.set("TORCHELASTIC_ERROR_FILE", files.error_file(attempt.number, rank));
  if (!choices.nccl_profiler.empty())
    add_nccl_stats(env, choices.nccl_profiler, files.nccl_stats_file(attempt.number, rank), warnings);
  if (!watched) return;
  env.set("DDP_PROGRESS_FILE", files.progress_file(attempt.number, rank));
  env.set_default("PYTHONFAULTHANDLER", "1");  // SIGABRT then prints every thread's stack
}

WorkerGroup::Launch launch_of(const NodePlan& plan, const LaunchChoices& choices, const Attempt& attempt,
                              std::uint32_t local, const RunFiles& files, const Environment& base,
                              std::vector<std::string>& warnings) {
  WorkerGroup::Launch launch;
  launch.env = worker_environment(base, plan, attempt.layout, local, attempt.ifname);
  launch.env.unset("SLURM_DDP_SECRET");  // the agents', not the workers'
  // Under Slurm, Slurm's task variables as if each worker were a task
  // (SDDP_KEEP_TASK_ENV=1: the node's one task's, PMI included).
  if (choices.slurm_view && base.get("SDDP_KEEP_TASK_ENV") != "1")
    apply_slurm_worker_view(launch.env, attempt.layout, local);
  add_files(launch.env, choices, attempt, attempt.layout.rank_base + local, files, warnings);
  // With --ddp-requeue, Slurm's warning (USR1) means: save, then end, the job
  // goes back to the queue. ddp-train then ends after its snapshot; a script
  // reads it to do the same (doc/failures.md).
  launch.env.set("DDP_REQUEUE", choices.requeue ? "1" : "0");
  if (local >= plan.placements.size()) return launch;
  const auto& place = plan.placements[local];
  if (choices.one_gpu_per_worker && !place.gpu.empty()) launch.env.set("CUDA_VISIBLE_DEVICES", place.gpu);
  if (place.cpus.empty()) return launch;
  if (auto mask = cpu_mask(place.cpus))
    launch.cpus = *mask;
  else
    warnings.push_back("worker " + std::to_string(local) + " left unbound: " + mask.error());
  return launch;
}

}  // namespace

std::vector<WorkerGroup::Launch> worker_launches(const NodePlan& plan, const LaunchChoices& choices,
                                                 const Attempt& attempt, const RunFiles& files, const Environment& base,
                                                 std::vector<std::string>& warnings) {
  std::vector<WorkerGroup::Launch> launches;
  for (std::uint32_t local = 0; local < attempt.layout.nproc; ++local)
    launches.push_back(launch_of(plan, choices, attempt, local, files, base, warnings));
  return launches;
}

}  // namespace ddp::agent
