#include "ddp/plan/request.hpp"

#include <cstring>

#include "ddp/base/bounds.hpp"
#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

// sbatch exports a flag as the string "(null)" (Slurm 22.05, src/common/spank.c).
bool absent(const char* value) { return value == nullptr || *value == '\0' || std::strcmp(value, "(null)") == 0; }

Result<std::uint32_t> count(const char* value, std::string_view option, std::uint64_t min, std::uint64_t max) {
  if (absent(value)) return fail("--" + std::string(option) + " needs a value, e.g. --" + std::string(option) + "=2");
  auto n = parse_uint(value, min, max, "--" + std::string(option));
  if (!n) return fail(n.error());
  return std::uint32_t(*n);
}

Result<StragglerAction> straggler_action(const char* value) {
  if (const auto action = absent(value) ? std::nullopt : straggler_action_from(value)) return *action;
  return fail("--ddp-stragglers='" + printable(absent(value) ? "" : value, 40) +
              "': use report (name a slow node, the default), swap (take it out for a spare) or off");
}

Result<PreflightAction> preflight_action(const char* value) {
  if (const auto action = absent(value) ? std::nullopt : preflight_action_from(value)) return *action;
  return fail("--ddp-preflight='" + printable(absent(value) ? "" : value, 40) +
              "': use check (name a node far off the others), swap (take it out for a spare) or off");
}

// The options whose value is a word naming what to do.
Status apply_action(DdpRequest& request, std::string_view option, const char* value) {
  if (option == "ddp-stragglers") {
    auto action = straggler_action(value);
    if (!action) return fail(action.error());
    request.stragglers = *action;
  } else {
    auto action = preflight_action(value);
    if (!action) return fail(action.error());
    request.preflight = *action;
  }
  return Ok{};
}

}  // namespace

Status apply_option(DdpRequest& request, std::string_view option, const char* value) {
  // On a compute node this runs as root: the length is checked before any parser reads the value.
  if (value && std::strlen(value) > kMaxOptionValue)
    return fail("--" + std::string(option) + ": the value is " + std::to_string(std::strlen(value)) +
                " bytes long, more than the " + std::to_string(kMaxOptionValue) + " a --ddp option takes");
  for (std::size_t i = 0; i < std::size(kOptions); ++i)
    if (option == kOptions[i].name) request.given |= 1u << i;
  if (option == "ddp") {
    if (!absent(value)) {
      auto mode = parse_mode(value);
      if (!mode) return fail(mode.error());
      request.mode = *mode;
    }
    request.enabled = true;
  } else if (option == "ddp-gpus") {
    auto n = count(value, option, 1, kMaxWorkersPerNode);
    if (!n) return fail(n.error());
    request.gpus = *n;
    request.enabled = true;
  } else if (option == "ddp-procs") {
    auto n = count(value, option, 1, kMaxWorkersPerNode);
    if (!n) return fail(n.error());
    request.procs = *n;
    request.enabled = true;
  } else if (option == "no-ddp") {
    request.opted_out = true;
  } else if (option == "ddp-port") {
    auto n = count(value, option, 1024, 65535);
    if (!n) return fail(n.error());
    request.port = std::uint16_t(*n);
  } else if (option == "ddp-restarts") {
    auto n = count(value, option, 0, kMaxRestarts);
    if (!n) return fail(n.error());
    request.restarts = *n;
  } else if (option == "ddp-verbose") {
    request.verbose = true;
  } else if (option == "ddp-requeue") {
    request.requeue = true;
  } else if (option == "ddp-hang-timeout") {
    auto n = count(value, option, 0, 3600);
    if (!n) return fail(n.error());
    request.hang_timeout_s = *n;
  } else if (option == "ddp-spares") {
    auto n = count(value, option, 0, kMaxNodes);
    if (!n) return fail(n.error());
    request.spares = *n;
  } else if (option == "ddp-min-nodes") {
    auto n = count(value, option, 1, kMaxNodes);
    if (!n) return fail(n.error());
    request.min_nodes = *n;
  } else if (option == "ddp-stragglers" || option == "ddp-preflight") {
    return apply_action(request, option, value);
  } else {
    return fail("unknown option --" + std::string(option));
  }
  return Ok{};
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

Status apply_environment(DdpRequest& request, const std::function<std::optional<std::string>(const char*)>& lookup) {
  // --no-ddp given on the command line settles it.
  if (request.opted_out) return Ok{};
  for (const auto& eq : kEnvEquivalents) {
    if (given(request, eq.option)) continue;
    const auto value = lookup(eq.variable);
    if (!value) continue;
    const std::string option = eq.option;
    Status status = Ok{};
    if (option == "ddp" && *value == "off") {
      request.opted_out = true;
    } else if (option == "ddp-verbose") {
      if (*value == "1")
        request.verbose = true;
      else if (*value != "0")
        status = fail("use 0 or 1");
    } else if (option == "ddp-requeue") {
      if (*value == "1" || *value == "0")
        request.requeue = *value == "1";
      else
        status = fail("use 0 or 1");
    } else {
      const DdpRequest before = request;
      status = apply_option(request, option, value->c_str());
      request.given = before.given;  // the environment does not count as given
    }
    if (!status) return fail(std::string(eq.variable) + "=" + *value + ": " + status.error());
  }
  return Ok{};
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
