#include "ddp/wire/node_plan.hpp"

#include "ddp/base/bounds.hpp"

namespace ddp {

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
  env.set(key("ARRAY_JOB_ID"), std::to_string(plan.array_job_id));
  env.set(key("ARRAY_TASK_ID"), std::to_string(plan.array_task_id));
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
  env.set(key("STRAGGLERS"), straggler_action_name(plan.stragglers));
  env.set(key("PREFLIGHT"), preflight_action_name(plan.preflight));
  env.set(key("GROUP_RANK"), std::to_string(plan.group_rank));
  env.set(key("GROUPS"), std::to_string(plan.groups));
  env.set(key("HEALTH_CHECK"), plan.health_check);
  env.set(key("HEALTH_CHECK_TIMEOUT_MS"), std::to_string(plan.health_check_timeout_ms));
  env.set(key("BAD_NODE_REPORT"), plan.bad_node_report);
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
  // Optional: a plan of 0.2.0 has none (a report, the default).
  if (const auto action = env.get(key("STRAGGLERS"))) {
    const auto a = straggler_action_from(*action);
    if (!a) return fail(key("STRAGGLERS") + "='" + printable(*action, 40) + "': expected report, swap or off");
    plan.stragglers = *a;
  }
  if (const auto action = env.get(key("PREFLIGHT"))) {  // optional too: none in a plan of 0.2.0
    const auto a = preflight_action_from(*action);
    if (!a) return fail(key("PREFLIGHT") + "='" + printable(*action, 40) + "': expected off, check or swap");
    plan.preflight = *a;
  }
  // Optional: a plan without them (an agent's own tests) is no array task.
  const std::pair<const char*, std::uint32_t*> array[] = {{"ARRAY_JOB_ID", &plan.array_job_id},
                                                          {"ARRAY_TASK_ID", &plan.array_task_id}};
  for (const auto& [name, out] : array) {
    if (!env.get(key(name))) continue;
    const auto n = number(env, name, 0, 0xffffffffu);
    if (!n) return fail(n.error());
    *out = std::uint32_t(*n);
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
  plan.bad_node_report = env.get(key("BAD_NODE_REPORT")).value_or("");  // optional: none in 0.2.0's plans
  auto placements = decode_placements(env.get(key("WORKERS")).value_or(""));
  if (!placements) return fail(key("WORKERS") + ": " + placements.error());
  plan.placements = std::move(*placements);
  if (auto ok = check_consistent(plan); !ok) return fail(ok.error());
  return plan;
}

const char* straggler_action_name(StragglerAction action) {
  switch (action) {
    case StragglerAction::Report: return "report";
    case StragglerAction::Swap: return "swap";
    case StragglerAction::Off: return "off";
  }
  return "report";
}

std::optional<StragglerAction> straggler_action_from(std::string_view name) {
  for (const auto a : {StragglerAction::Report, StragglerAction::Swap, StragglerAction::Off})
    if (name == straggler_action_name(a)) return a;
  return std::nullopt;
}

const char* preflight_action_name(PreflightAction action) {
  switch (action) {
    case PreflightAction::Off: return "off";
    case PreflightAction::Check: return "check";
    case PreflightAction::Swap: return "swap";
  }
  return "off";
}

std::optional<PreflightAction> preflight_action_from(std::string_view name) {
  for (const auto a : {PreflightAction::Off, PreflightAction::Check, PreflightAction::Swap})
    if (name == preflight_action_name(a)) return a;
  return std::nullopt;
}

std::string scontrol_job_name(const NodePlan& plan) {
  if (plan.array_job_id == 0) return std::to_string(plan.job_id);
  return std::to_string(plan.array_job_id) + "_" + std::to_string(plan.array_task_id);
}

}  // namespace ddp
