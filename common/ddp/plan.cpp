#include "ddp/plan.hpp"

#include <algorithm>
#include <limits>

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

namespace {

std::string key(std::string_view name) { return std::string(kPlanPrefix) + std::string(name); }

Result<std::uint64_t> number(const Environment& env, std::string_view name, std::uint64_t min, std::uint64_t max) {
  const auto text = env.get(key(name));
  if (!text)
    return fail(key(name) +
                " is not set: ddp-agent was started without a plan; under Slurm the "
                "spank_ddp plugin sets it, standalone use --nproc");
  return parse_uint(*text, min, max, key(name));
}

}  // namespace

void write_plan(const NodePlan& plan, Environment& env) {
  env.set(key("VERSION"), std::to_string(kPlanVersion));
  env.set(key("RUN_ID"), plan.run_id);
  env.set(key("MODE"), std::string(to_string(plan.mode)));
  env.set(key("NODE_RANK"), std::to_string(plan.node_rank));
  env.set(key("NNODES"), std::to_string(plan.nnodes));
  env.set(key("NPROC"), std::to_string(plan.nproc));
  env.set(key("RANK_BASE"), std::to_string(plan.rank_base));
  env.set(key("WORLD_SIZE"), std::to_string(plan.world_size));
  env.set(key("MASTER_ADDR"), plan.master_addr);
  env.set(key("MASTER_PORT"), std::to_string(plan.master_port));
  env.set(key("MAX_RESTARTS"), std::to_string(plan.max_restarts));
  env.set(key("VERBOSE"), plan.verbose ? "1" : "0");
  env.set(key("STOP_GRACE_MS"), std::to_string(plan.stop_grace_ms));
  env.set(key("EXPORT_IB_HCA"), plan.export_ib_hca ? "1" : "0");
  env.set(key("MASTER_PORT_FIXED"), plan.master_port_fixed ? "1" : "0");
  env.set(key("JOB_ID"), std::to_string(plan.job_id));
  env.set(key("STEP_ID"), std::to_string(plan.step_id));
  env.set(key("PORT_RANGE"), std::to_string(plan.port_range.first) + "-" + std::to_string(plan.port_range.last));
  env.set(key("RDZV_PORT"), std::to_string(plan.rdzv_port));
  env.set(key("MASTER_INTERFACE"), plan.master_interface);
  env.set(key("RDZV_TIMEOUT_MS"), std::to_string(plan.rdzv_timeout_ms));
  env.set(key("HEARTBEAT_TIMEOUT_MS"), std::to_string(plan.heartbeat_timeout_ms));
  env.set(key("REQUEUE"), plan.requeue ? "1" : "0");
  env.set(key("REQUEUE_WAIT_MS"), std::to_string(plan.requeue_wait_ms));
  env.set(key("HANG_TIMEOUT_MS"), std::to_string(plan.hang_timeout_ms));
  env.set(key("SPARES"), std::to_string(plan.spares));
  env.set(key("MIN_NODES"), std::to_string(plan.min_nodes));
  env.set(key("GROUP_RANK"), std::to_string(plan.group_rank));
  env.set(key("GROUPS"), std::to_string(plan.groups));
  env.set(key("HEALTH_CHECK"), plan.health_check);
  env.set(key("HEALTH_CHECK_TIMEOUT_MS"), std::to_string(plan.health_check_timeout_ms));
  env.set(key("WORKERS"), encode_placements(plan.placements));
}

namespace {

// The plan's numeric fields, each in its range.
Status read_numbers(const Environment& env, NodePlan& plan) {
  struct Field {
    std::string_view name;
    std::uint64_t min, max;
    std::uint32_t* out;
  };
  const Field fields[] = {
      {"NODE_RANK", 0, 1u << 20, &plan.node_rank},
      {"NNODES", 1, 1u << 20, &plan.nnodes},
      {"NPROC", 1, kMaxWorkersPerNode, &plan.nproc},
      {"RANK_BASE", 0, 1u << 30, &plan.rank_base},
      {"WORLD_SIZE", 1, 1u << 30, &plan.world_size},
      {"MAX_RESTARTS", 0, kMaxRestarts, &plan.max_restarts},
      {"STOP_GRACE_MS", 0, 3600 * 1000, &plan.stop_grace_ms},
      {"JOB_ID", 0, 0xffffffffu, &plan.job_id},
      {"STEP_ID", 0, 0xffffffffu, &plan.step_id},
      {"RDZV_TIMEOUT_MS", 1000, 3600 * 1000, &plan.rdzv_timeout_ms},
      {"HEARTBEAT_TIMEOUT_MS", 1000, 3600 * 1000, &plan.heartbeat_timeout_ms},
      {"REQUEUE_WAIT_MS", 0, 3600 * 1000, &plan.requeue_wait_ms},
      {"HANG_TIMEOUT_MS", 0, 86400u * 1000, &plan.hang_timeout_ms},
      {"SPARES", 0, 1u << 20, &plan.spares},
      {"MIN_NODES", 0, 1u << 20, &plan.min_nodes},
      {"GROUP_RANK", 0, 1u << 20, &plan.group_rank},
      {"GROUPS", 1, 1u << 20, &plan.groups},
      {"HEALTH_CHECK_TIMEOUT_MS", 1000, 3600 * 1000, &plan.health_check_timeout_ms},
  };
  for (const auto& f : fields) {
    const auto n = number(env, f.name, f.min, f.max);
    if (!n) return fail(n.error());
    *f.out = std::uint32_t(*n);
  }
  const auto port = number(env, "MASTER_PORT", 1, 65535);
  if (!port) return fail(port.error());
  plan.master_port = std::uint16_t(*port);
  const auto rdzv = number(env, "RDZV_PORT", 0, 65535);
  if (!rdzv) return fail(rdzv.error());
  plan.rdzv_port = std::uint16_t(*rdzv);
  return Ok{};
}

// Fields that must agree with each other.
Status check_consistent(const NodePlan& plan) {
  if (!plan.placements.empty() && plan.placements.size() != plan.nproc)
    return fail("the plan places " + std::to_string(plan.placements.size()) + " of " + std::to_string(plan.nproc) +
                " workers");
  if (plan.node_rank >= plan.nnodes) return fail(key("NODE_RANK") + " is not below " + key("NNODES"));
  if (plan.groups + plan.spares != plan.nnodes || plan.min_nodes > plan.groups)
    return fail(key("GROUPS") + ", " + key("SPARES") + " and " + key("MIN_NODES") + " do not fit " + key("NNODES"));
  if (std::uint64_t(plan.rank_base) + plan.nproc > plan.world_size)
    return fail(key("RANK_BASE") + " + " + key("NPROC") + " exceeds " + key("WORLD_SIZE"));
  return Ok{};
}

}  // namespace

Result<NodePlan> read_plan(const Environment& env) {
  const auto version = number(env, "VERSION", 0, 1u << 30);
  if (!version) return fail(version.error());
  if (*version != kPlanVersion)
    return fail("the plan from spank_ddp.so has version " + std::to_string(*version) +
                " but this ddp-agent reads version " + std::to_string(kPlanVersion) +
                ": install the plugin and the agent from the same slurm-ddp release");

  NodePlan plan;
  plan.run_id = env.get(key("RUN_ID")).value_or("");
  if (plan.run_id.empty()) return fail(key("RUN_ID") + " is empty");
  const auto mode = parse_mode(env.get(key("MODE")).value_or(""));
  if (!mode || *mode == Mode::Auto) return fail(key("MODE") + " must be gpu or cpu");
  plan.mode = *mode;
  if (auto ok = read_numbers(env, plan); !ok) return fail(ok.error());
  const auto range = parse_port_range(env.get(key("PORT_RANGE")).value_or(""), key("PORT_RANGE"));
  if (!range) return fail(range.error());
  plan.port_range = *range;
  plan.master_port_fixed = env.get(key("MASTER_PORT_FIXED")).value_or("0") == "1";
  plan.master_interface = env.get(key("MASTER_INTERFACE")).value_or("");
  plan.master_addr = env.get(key("MASTER_ADDR")).value_or("");
  if (plan.master_addr.empty()) return fail(key("MASTER_ADDR") + " is empty");
  plan.verbose = env.get(key("VERBOSE")).value_or("0") == "1";
  plan.export_ib_hca = env.get(key("EXPORT_IB_HCA")).value_or("0") == "1";
  plan.requeue = env.get(key("REQUEUE")).value_or("0") == "1";
  plan.health_check = env.get(key("HEALTH_CHECK")).value_or("");
  auto placements = decode_placements(env.get(key("WORKERS")).value_or(""));
  if (!placements) return fail(key("WORKERS") + ": " + placements.error());
  plan.placements = std::move(*placements);
  if (auto ok = check_consistent(plan); !ok) return fail(ok.error());
  return plan;
}

namespace {
std::uint16_t port_in_slot(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t k) {
  // Spread jobs over the range with a multiplicative hash of the job id, then
  // walk forward from there one slot per (step, attempt). 64 attempts per step
  // leave room for --ddp-restarts without a step's ports meeting the next step's.
  // Slurm's special step ids (batch script 0xfffffffb, extern, interactive)
  // take slot 0; step N takes slot N + 1.
  const std::uint32_t span = range.size();
  const std::uint64_t job_offset = (std::uint64_t(job_id) * 2654435761u) % span;
  const std::uint64_t step_slot = step_id >= 0xfffffff0u ? 0 : std::uint64_t(step_id) + 1;
  const std::uint64_t slot = (step_slot * 64 + k) % span;
  return std::uint16_t(range.first + (job_offset + slot) % span);
}
}  // namespace

std::uint16_t derive_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t attempt) {
  return port_in_slot(range, job_id, step_id, 1 + attempt % 63);
}

std::uint16_t derive_rdzv_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id) {
  return port_in_slot(range, job_id, step_id, 0);
}

std::uint16_t master_port_for(const NodePlan& plan, std::uint32_t attempt) {
  if (plan.master_port_fixed || attempt == 0) return plan.master_port;
  return derive_port(plan.port_range, plan.job_id, plan.step_id, attempt);
}

}  // namespace ddp

namespace ddp {

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
              "set DDP_ONE_GPU_PER_WORKER=1");
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

}  // namespace ddp

namespace ddp {

Result<std::vector<std::uint32_t>> parse_tasks_per_node(std::string_view text) {
  std::vector<std::uint32_t> counts;
  const std::string what = "SLURM_TASKS_PER_NODE=" + std::string(text);
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
    auto n = parse_uint(item, 0, kMaxWorkersPerNode, what);
    if (!n) return fail(n.error());
    if (counts.size() + repeat > (1u << 20)) return fail(what + ": too many nodes");
    counts.insert(counts.end(), repeat, std::uint32_t(*n));
  }
  return counts;
}

}  // namespace ddp
