#include "ddp/plan/request.hpp"

#include <cstring>
#include <type_traits>

#include "ddp/base/bounds.hpp"
#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

// sbatch exports a flag as the string "(null)" (Slurm 22.05, src/common/spank.c).
bool absent(const char* value) { return value == nullptr || *value == '\0' || std::strcmp(value, "(null)") == 0; }

// `what` names the value in messages the way the user gave it: the option
// ("--ddp-gpus") or the variable ("SDDP_GPUS").
Result<std::uint32_t> count(const char* value, const std::string& what, std::uint64_t min, std::uint64_t max) {
  if (absent(value)) return fail(what + " needs a value, e.g. " + what + "=2");
  auto n = parse_uint(value, min, max, what);
  if (!n) return fail(n.error());
  return std::uint32_t(*n);
}

Result<StragglerAction> straggler_action(const char* value, const std::string& what) {
  if (const auto action = absent(value) ? std::nullopt : straggler_action_from(value)) return *action;
  return fail(what + "='" + printable(absent(value) ? "" : value, 40) +
              "': use report (name a slow node, the default), swap (take it out for a spare) or off");
}

Result<PreflightAction> preflight_action(const char* value, const std::string& what) {
  if (const auto action = absent(value) ? std::nullopt : preflight_action_from(value)) return *action;
  return fail(what + "='" + printable(absent(value) ? "" : value, 40) +
              "': use check (name a node far off the others), swap (take it out for a spare) or off");
}

// One value for `option`, named `what` in messages; leaves `given` alone.
Status apply_value(DdpRequest& request, std::string_view option, const char* value, const std::string& what) {
  // On a compute node this runs as root: the length is checked before any parser reads the value.
  if (value && std::strlen(value) > kMaxOptionValue)
    return fail(what + ": the value is " + std::to_string(std::strlen(value)) + " bytes long, more than the " +
                std::to_string(kMaxOptionValue) + " a --ddp option takes");
  const auto number = [&](auto& field, std::uint64_t min, std::uint64_t max) -> Status {
    auto n = count(value, what, min, max);
    if (!n) return fail(n.error());
    field = static_cast<std::remove_reference_t<decltype(field)>>(*n);
    return Ok{};
  };
  if (option == "ddp") {
    if (!absent(value)) {
      auto mode = parse_mode(value);
      if (!mode) return fail(mode.error());
      request.mode = *mode;
    }
    request.enabled = true;
    return Ok{};
  }
  if (option == "ddp-gpus" || option == "ddp-procs") {
    request.enabled = true;
    return number(option == "ddp-gpus" ? request.gpus : request.procs, 1, kMaxWorkersPerNode);
  }
  if (option == "no-ddp") {
    request.opted_out = true;
    return Ok{};
  }
  if (option == "ddp-port") return number(request.port, 1024, 65535);
  if (option == "ddp-restarts") return number(request.restarts, 0, kMaxRestarts);
  if (option == "ddp-verbose") {
    request.verbose = true;
    return Ok{};
  }
  if (option == "ddp-requeue") {
    request.requeue = true;
    return Ok{};
  }
  if (option == "ddp-hang-timeout") return number(request.hang_timeout_s, 0, 3600);
  if (option == "ddp-spares") return number(request.spares, 0, kMaxNodes);
  if (option == "ddp-min-nodes") return number(request.min_nodes, 1, kMaxNodes);
  if (option == "ddp-stragglers") {
    auto action = straggler_action(value, what);
    if (!action) return fail(action.error());
    request.stragglers = *action;
    return Ok{};
  }
  if (option == "ddp-preflight") {
    auto action = preflight_action(value, what);
    if (!action) return fail(action.error());
    request.preflight = *action;
    return Ok{};
  }
  return fail("unknown option --" + std::string(option));
}

// One SDDP_* variable: the values a variable takes where the option is a flag
// (0|1) or takes a mode (also off), then as the option's value.
Status apply_variable(DdpRequest& request, const EnvEquivalent& eq, const std::string& value) {
  const std::string option = eq.option;
  const std::string variable = eq.variable;
  if (value.size() > kMaxOptionValue)
    return fail(variable + ": the value is " + std::to_string(value.size()) + " bytes long, more than the " +
                std::to_string(kMaxOptionValue) + " a --ddp option takes; shorten it or unset " + variable);
  const std::string shown = variable + "=" + printable(value, 40);
  if (option == "ddp") {
    if (value == "off") {
      request.opted_out = true;
      return Ok{};
    }
    auto mode = parse_mode(value);
    if (!mode) return fail(shown + " is not a mode; use auto, gpu, cpu or off, or unset " + variable);
    request.mode = *mode;
    return Ok{};
  }
  if (option == "ddp-verbose" || option == "ddp-requeue") {
    if (value != "0" && value != "1") return fail(shown + ": use " + variable + "=1 or 0, or unset it");
    if (option == "ddp-verbose") request.verbose = value == "1";
    if (option == "ddp-requeue") request.requeue = value == "1";
    return Ok{};
  }
  auto applied = apply_value(request, option, value.c_str(), variable);
  if (!applied) return fail(applied.error() + ", or unset " + variable);
  return Ok{};
}

}  // namespace

Status apply_option(DdpRequest& request, std::string_view option, const char* value) {
  // A bare --ddp (also sbatch's "(null)") turns DDP on but names no mode: SDDP_MODE may.
  const bool says_nothing = option == "ddp" && absent(value);
  for (std::size_t i = 0; i < std::size(kOptions); ++i)
    if (option == kOptions[i].name && !says_nothing) request.given |= 1u << i;
  return apply_value(request, option, value, "--" + std::string(option));
}

Status check_no_container_plugin(const std::string& container, bool task_shape) {
  if (container.empty() || task_shape) return Ok{};
  return fail(container +
              ": --ddp's agent cannot start workers inside a pyxis container (pyxis enters the container after "
              "the plugin launches the agent, so the agent would run outside it or not be found in the image); "
              "run one task per worker instead, and each task becomes a worker inside the container: srun "
              "--ntasks-per-node=<workers per node> --ddp " +
              container + " ...");
}

bool asks_no_kill(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (w == "--no-kill" || w.rfind("--no-kill=", 0) == 0) return true;
    if (w.size() < 2 || w[0] != '-' || w[1] == '-') continue;
    // srun's short options that take no argument, then k: "-k", "-lk", "-vvk".
    const auto end = w.find_first_not_of("EhHjlOQsuvVX", 1);
    if (end != std::string::npos && w[end] == 'k') return true;
  }
  return false;
}

std::optional<std::string> signal_option(const std::vector<std::string>& words) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("--signal=", 0) == 0) value = words[i].substr(9);
    if (words[i] == "--signal" && i + 1 < words.size()) value = words[i + 1];
  }
  return value;
}

Status check_requeue_signal(const DdpRequest& request, const std::optional<std::string>& signal) {
  if (!request.active() || !request.requeue.value_or(false)) return Ok{};
  const std::string fix = "; submit it with sbatch --signal=USR1@SECONDS (e.g. --signal=USR1@120)";
  if (!signal)
    return fail("--ddp-requeue, but the job has no --signal: Slurm never warns it before its time limit, and only a "
                "USR1 sent by hand (scancel --signal=USR1) would requeue it" + fix);
  std::string_view text = *signal;
  const auto prefix = text.find(':');
  const std::string_view flags = prefix == std::string_view::npos ? "" : text.substr(0, prefix);
  text = text.substr(prefix == std::string_view::npos ? 0 : prefix + 1);
  text = text.substr(0, text.find('@'));
  if (text.rfind("SIG", 0) == 0) text.remove_prefix(3);
  const bool usr = text == "USR1" || text == "USR2" || text == "10" || text == "12";
  if (!usr)
    return fail("--ddp-requeue, but the job's --signal=" + printable(*signal, 40) +
                " warns with another signal, and the agents requeue on USR1 or USR2" + fix);
  if (flags.find('B') != std::string_view::npos)
    return fail("--ddp-requeue, but --signal=" + printable(*signal, 40) +
                " (B:) reaches the batch shell only, not the agents" + fix);
  return Ok{};
}

Status check_no_kill(const DdpRequest& request, bool no_kill) {
  if (!request.active() || no_kill || (request.spares == 0 && !request.min_nodes)) return Ok{};
  return fail(std::string(request.spares ? "--ddp-spares" : "--ddp-min-nodes") +
              " needs a step that outlives a lost node: add --no-kill (-k) to srun, and submit the job with "
              "--no-kill (sbatch/salloc); otherwise Slurm kills the whole step when it declares the lost node "
              "DOWN (SlurmdTimeout after the loss), the training that went on meanwhile with it");
}

Status validate(const DdpRequest& request) {
  if (!request.active()) return Ok{};
  if (request.mode == Mode::Cpu && request.gpus)
    return fail("--ddp-gpus asks for GPU workers but --ddp=cpu for CPU workers; drop one of them");
  if (request.mode == Mode::Gpu && request.procs)
    return fail(
        "--ddp-procs sets CPU workers but --ddp=gpu asks for GPU workers; use --ddp=cpu --ddp-procs=N or --ddp-gpus=N");
  if (request.gpus && request.procs)
    return fail(
        "--ddp-gpus and --ddp-procs both given; use --ddp-gpus=N for GPU workers or --ddp-procs=N for CPU workers");
  return Ok{};
}

namespace {
bool given(const DdpRequest& request, std::string_view option) {
  for (std::size_t i = 0; i < std::size(kOptions); ++i)
    if (option == kOptions[i].name) return request.given & (1u << i);
  return false;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
}  // namespace

Status apply_environment(DdpRequest& request, const EnvLookup& lookup) {
  // Without --ddp, or with --no-ddp (also SDDP_MODE=off, read first), nothing is read.
  for (const auto& eq : kEnvEquivalents) {
    if (!request.active()) return Ok{};
    if (given(request, eq.option)) continue;
    if (const auto value = lookup(eq.variable))
      if (auto applied = apply_variable(request, eq, *value); !applied) return applied;
  }
  return Ok{};
}

std::optional<std::string> retired_variables_warning(const EnvLookup& lookup) {
  std::string old_names, new_names;
  for (const auto& eq : kEnvEquivalents) {
    if (!eq.retired || !lookup(eq.retired)) continue;
    old_names += (old_names.empty() ? "" : ", ") + std::string(eq.retired);
    new_names += (new_names.empty() ? "" : ", ") + std::string(eq.variable);
  }
  if (old_names.empty()) return std::nullopt;
  const bool one = old_names.find(',') == std::string::npos;
  return old_names + (one ? " is" : " are") + " not read any more: set " + new_names;
}

Status check_not_a_launcher(const std::vector<std::string>& argv, bool local_rank_set) {
  static constexpr std::string_view launchers[] = {"torchrun",  "mpirun",     "mpiexec",   "srun",
                                                   "deepspeed", "accelerate", "horovodrun"};
  const auto fix = std::string(
      "; with --ddp each node's agent starts the workers itself: run the training script "
      "directly (srun --ddp python train.py), or keep your launcher and add --no-ddp");
  if (!argv.empty()) {
    const auto name = basename_of(argv[0]);
    for (const auto launcher : launchers)
      if (name == launcher) return fail("the step's command is " + name + ", a launcher" + fix);
    // python -m torch.distributed.run / torch.distributed.launch
    for (std::size_t i = 1; i + 1 < argv.size(); ++i)
      if (argv[i] == "-m" && (argv[i + 1] == "torch.distributed.run" || argv[i + 1] == "torch.distributed.launch"))
        return fail("the step runs python -m " + argv[i + 1] + ", a launcher" + fix);
  }
  if (local_rank_set)
    return fail(
        "LOCAL_RANK is already set in the step's environment, so another launcher is at work (or a stale "
        "export); unset LOCAL_RANK, or run this step with --no-ddp");
  return Ok{};
}

}  // namespace ddp
