#include "ddp/wire/node_plan.hpp"

#include <optional>
#include <tuple>

#include "ddp/base/bounds.hpp"

namespace ddp {

namespace {

std::string key(std::string_view name) { return std::string(kPlanPrefix) + std::string(name); }

const std::string kNotSet =
    " is not set: ddp-agent was started without a plan; under Slurm the spank_ddp plugin sets it, standalone use "
    "--nproc";

// ---- how a field travels ------------------------------------------------------
// Each kind of field writes itself into the environment and reads itself back,
// checked. `required`: a plan without it is refused; otherwise an older
// release's plan, which has none, reads as the field's default.

constexpr bool kRequired = true, kOptional = false;

struct Text {  // the value as it is
  std::string_view name;
  std::string NodePlan::*field;
  bool required;  // and not empty
  void write(const NodePlan& p, Environment& env) const { env.set(key(name), p.*field); }
  Status read(const Environment& env, NodePlan& p) const {
    p.*field = env.get(key(name)).value_or("");
    if (required && (p.*field).empty()) return fail(key(name) + " is empty");
    return Ok{};
  }
};

template <class T>
struct Number {  // decimal, in [min, max]
  std::string_view name;
  T NodePlan::*field;
  std::uint64_t min, max;
  bool required = kRequired;
  void write(const NodePlan& p, Environment& env) const { env.set(key(name), std::to_string(p.*field)); }
  Status read(const Environment& env, NodePlan& p) const {
    const auto text = env.get(key(name));
    if (!text && !required) return Ok{};
    if (!text) return fail(key(name) + kNotSet);
    const auto n = parse_uint(*text, min, max, key(name));
    if (!n) return fail(n.error());
    p.*field = T(*n);
    return Ok{};
  }
};

struct Flag {  // "1" or "0"
  std::string_view name;
  bool NodePlan::*field;
  void write(const NodePlan& p, Environment& env) const { env.set(key(name), p.*field ? "1" : "0"); }
  Status read(const Environment& env, NodePlan& p) const {
    p.*field = env.get(key(name)).value_or("0") == "1";
    return Ok{};
  }
};

template <class E>
struct Word {  // one of an enum's names
  std::string_view name;
  E NodePlan::*field;
  const char* (*to_name)(E);
  std::optional<E> (*from_name)(std::string_view);
  const char* expected;  // "report, swap or off"
  bool required;
  void write(const NodePlan& p, Environment& env) const { env.set(key(name), to_name(p.*field)); }
  Status read(const Environment& env, NodePlan& p) const {
    const auto text = env.get(key(name));
    if (!text && !required) return Ok{};
    const auto value = from_name(text.value_or(""));
    if (!value) return fail(key(name) + "='" + printable(text.value_or(""), 40) + "': expected " + expected);
    p.*field = *value;
    return Ok{};
  }
};

struct Range {  // "LO-HI"
  std::string_view name;
  PortRange NodePlan::*field;
  void write(const NodePlan& p, Environment& env) const {
    env.set(key(name), std::to_string((p.*field).first) + "-" + std::to_string((p.*field).last));
  }
  Status read(const Environment& env, NodePlan& p) const {
    const auto range = parse_port_range(env.get(key(name)).value_or(""), key(name));
    if (!range) return fail(range.error());
    p.*field = *range;
    return Ok{};
  }
};

struct Placements {  // placement.hpp's one text form
  std::string_view name;
  std::vector<WorkerPlacement> NodePlan::*field;
  void write(const NodePlan& p, Environment& env) const { env.set(key(name), encode_placements(p.*field)); }
  Status read(const Environment& env, NodePlan& p) const {
    auto placements = decode_placements(env.get(key(name)).value_or(""));
    if (!placements) return fail(key(name) + ": " + placements.error());
    p.*field = std::move(*placements);
    return Ok{};
  }
};

const char* mode_name(Mode mode) { return mode == Mode::Gpu ? "gpu" : "cpu"; }
std::optional<Mode> worker_mode_from(std::string_view text) {  // resolved: gpu or cpu, never auto
  const auto mode = parse_mode(text);
  if (!mode || *mode == Mode::Auto) return std::nullopt;
  return *mode;
}

// ---- the plan, field by field ---------------------------------------------------
// Every field of NodePlan once: its variable (DDP_PLAN_<name>) and how it
// travels. The static_assert below counts NodePlan's fields, so a field added
// there and not here does not compile.
const auto kFields = std::make_tuple(
    Text{"RUN_ID", &NodePlan::run_id, kRequired},
    Word<Mode>{"MODE", &NodePlan::mode, mode_name, worker_mode_from, "gpu or cpu", kRequired},
    Number<std::uint32_t>{"NODE_RANK", &NodePlan::node_rank, 0, 1u << 20},
    Number<std::uint32_t>{"NNODES", &NodePlan::nnodes, 1, 1u << 20},
    Number<std::uint32_t>{"NPROC", &NodePlan::nproc, 1, kMaxWorkersPerNode},
    Number<std::uint32_t>{"RANK_BASE", &NodePlan::rank_base, 0, 1u << 30},
    Number<std::uint32_t>{"WORLD_SIZE", &NodePlan::world_size, 1, 1u << 30},
    Text{"MASTER_ADDR", &NodePlan::master_addr, kRequired},
    Number<std::uint16_t>{"MASTER_PORT", &NodePlan::master_port, 1, 65535},
    Flag{"MASTER_PORT_FIXED", &NodePlan::master_port_fixed},
    Number<std::uint32_t>{"JOB_ID", &NodePlan::job_id, 0, 0xffffffffu},
    Number<std::uint32_t>{"STEP_ID", &NodePlan::step_id, 0, 0xffffffffu},
    Number<std::uint32_t>{"ARRAY_JOB_ID", &NodePlan::array_job_id, 0, 0xffffffffu, kOptional},
    Number<std::uint32_t>{"ARRAY_TASK_ID", &NodePlan::array_task_id, 0, 0xffffffffu, kOptional},
    Range{"PORT_RANGE", &NodePlan::port_range},
    Number<std::uint16_t>{"RDZV_PORT", &NodePlan::rdzv_port, 0, 65535},
    Text{"MASTER_INTERFACE", &NodePlan::master_interface, kOptional},
    Number<std::uint32_t>{"RDZV_TIMEOUT_MS", &NodePlan::rdzv_timeout_ms, 1000, 3600 * 1000},
    Number<std::uint32_t>{"HEARTBEAT_TIMEOUT_MS", &NodePlan::heartbeat_timeout_ms, 1000, 3600 * 1000},
    Number<std::uint32_t>{"MAX_RESTARTS", &NodePlan::max_restarts, 0, kMaxRestarts},
    Number<std::uint32_t>{"STOP_GRACE_MS", &NodePlan::stop_grace_ms, 0, 3600 * 1000},
    Flag{"VERBOSE", &NodePlan::verbose},
    Flag{"EXPORT_IB_HCA", &NodePlan::export_ib_hca},
    Flag{"REQUEUE", &NodePlan::requeue},
    Number<std::uint32_t>{"REQUEUE_WAIT_MS", &NodePlan::requeue_wait_ms, 0, 3600 * 1000},
    Flag{"JOB_COMMENT", &NodePlan::job_comment},
    Number<std::uint32_t>{"HANG_TIMEOUT_MS", &NodePlan::hang_timeout_ms, 0, 86400u * 1000},
    Number<std::uint32_t>{"SPARES", &NodePlan::spares, 0, 1u << 20},
    Number<std::uint32_t>{"MIN_NODES", &NodePlan::min_nodes, 0, 1u << 20},
    Word<StragglerAction>{"STRAGGLERS", &NodePlan::stragglers, straggler_action_name, straggler_action_from,
                          "report, swap or off", kOptional},
    Word<PreflightAction>{"PREFLIGHT", &NodePlan::preflight, preflight_action_name, preflight_action_from,
                          "off, check or swap", kOptional},
    Number<std::uint32_t>{"GROUP_RANK", &NodePlan::group_rank, 0, 1u << 20},
    Number<std::uint32_t>{"GROUPS", &NodePlan::groups, 1, 1u << 20},
    Text{"HEALTH_CHECK", &NodePlan::health_check, kOptional},
    Number<std::uint32_t>{"HEALTH_CHECK_TIMEOUT_MS", &NodePlan::health_check_timeout_ms, 1000, 3600 * 1000},
    Text{"BAD_NODE_REPORT", &NodePlan::bad_node_report, kOptional},
    Placements{"WORKERS", &NodePlan::placements});

// How many fields an aggregate has: the most initializers it takes.
struct AnyField {
  template <class T>
  operator T() const;
};
template <class T, class... Fields>
constexpr std::size_t field_count() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; })
    return field_count<T, Fields..., AnyField>();
  else
    return sizeof...(Fields);
}
static_assert(std::tuple_size_v<decltype(kFields)> == field_count<NodePlan>(),
              "every field of NodePlan needs its row in kFields");

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

void write_plan(const NodePlan& plan, Environment& env) {
  env.set(key("VERSION"), std::to_string(kPlanVersion));
  std::apply([&](const auto&... field) { (field.write(plan, env), ...); }, kFields);
}

Result<NodePlan> read_plan(const Environment& env) {
  const auto version = env.get(key("VERSION"));
  if (!version) return fail(key("VERSION") + kNotSet);
  const auto number = parse_uint(*version, 0, 1u << 30, key("VERSION"));
  if (!number) return fail(number.error());
  if (*number != kPlanVersion)
    return fail("the plan from spank_ddp.so has version " + std::to_string(*number) +
                " but this ddp-agent reads version " + std::to_string(kPlanVersion) +
                ": install the plugin and the agent from the same slurm-ddp release");
  NodePlan plan;
  std::optional<std::string> error;  // the first field's that fails
  const auto read = [&](const auto& field) {
    if (auto ok = field.read(env, plan); !ok && !error) error = ok.error();
  };
  std::apply([&](const auto&... field) { (read(field), ...); }, kFields);
  if (error) return fail(*error);
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
