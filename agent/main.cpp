// ddp-agent: one per node. Starts the node's workers with torchrun's
// environment contract, watches them, stops them all when one fails.
//
//   ddp-agent --nproc 4 -- python train.py        standalone, one machine
//   (under Slurm the spank_ddp plugin execs:  ddp-agent --plan-from-env -- CMD)
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "node/agent.hpp"
#include "node/checks/checks.hpp"
#include "ddp/base/bounds.hpp"
#include "ddp/base/version.hpp"
#include "ddp/node/limits.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "logger.hpp"
#include "node/workers/worker_group.hpp"

using namespace ddp;

namespace {

// The command line, as given (standalone) or with the plan from the environment (Slurm).
struct Options {
  std::uint32_t nproc = 0;
  std::string master_addr = "127.0.0.1";
  std::uint16_t master_port = 0;
  std::uint32_t max_restarts = 0;
  double grace_s = 5.0;
  bool from_env = false;
  bool verbose = false;
  double rdzv_timeout_s = 0, heartbeat_timeout_s = 0, hang_timeout_s = 0;
  bool no_prefix = false, one_gpu = false;
  std::string output_ranks, log_dir;
  std::vector<std::string> command;
  // Which of these were given (the others keep the plan's or the defaults).
  bool grace_given = false, rdzv_given = false, heartbeat_given = false, hang_given = false;
};

// `standalone`: SDDP_HANG_TIMEOUT stands in for --hang-timeout. Under Slurm the
// plan carries the plugin's choice (--ddp-hang-timeout, SDDP_HANG_TIMEOUT,
// the site's), and the agent reads no such variable: a bad one would stop
// the agent after the plugin had taken it.
void add_timeouts(CLI::App& app, Options& o, bool standalone, CLI::Option*& rdzv, CLI::Option*& hang,
                  CLI::Option*& hb) {
  rdzv = app.add_option("--rdzv-timeout", o.rdzv_timeout_s, "Seconds for every node's agent to arrive (60)")
             ->check(CLI::Range(1.0, 3600.0));
  hang = app.add_option("--hang-timeout", o.hang_timeout_s,
                        "Seconds without progress (DDP_PROGRESS_FILE untouched) after which a worker is "
                        "a hang: its stack is dumped and the run stops (0: off, the default)")
             ->check(CLI::Range(0.0, 3600.0));
  if (standalone) hang->envname("SDDP_HANG_TIMEOUT");
  hb = app.add_option("--heartbeat-timeout", o.heartbeat_timeout_s,
                      "Seconds of silence after which a node is declared lost (5)")
           ->check(CLI::Range(1.0, 3600.0));
}

// --plan-from-env among the agent's own words (before "--", where the
// workers' command starts).
bool plan_from_env_asked(int argc, char** argv) {
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
    if (std::string_view(argv[i]) == "--plan-from-env") return true;
  return false;
}

// Parses argv into `o`; an exit code when the agent must not run (--help,
// --version: 0; a bad option: CLI11's code, with its message).
std::optional<int> parse_command_line(int argc, char** argv, Options& o) {
  CLI::App app{"ddp-agent: starts and supervises the data-parallel workers of one node"};
  app.set_version_flag("--version", std::string("ddp-agent ") + kVersion);
  auto* nproc_opt = app.add_option("--nproc", o.nproc, "Workers to start on this machine (standalone)")
                        ->check(CLI::Range(1u, std::uint32_t(kMaxWorkersPerNode)));
  app.add_option("--master-addr", o.master_addr, "MASTER_ADDR for the workers (standalone)")->capture_default_str();
  app.add_option("--master-port", o.master_port, "MASTER_PORT (standalone; default: a free port of 20000-29999)");
  app.add_option("--max-restarts", o.max_restarts, "Restart all workers up to N times after a failure")
      ->check(CLI::Range(0u, std::uint32_t(kMaxRestarts)));
  auto* grace_opt = app.add_option("--grace", o.grace_s, "Seconds between SIGTERM and SIGKILL when stopping workers")
                        ->check(CLI::Range(0.0, 3600.0))
                        ->capture_default_str();
  auto* env_opt = app.add_flag("--plan-from-env", o.from_env,
                               "Take the plan from DDP_PLAN_* variables (set by the spank_ddp Slurm plugin)");
  app.add_flag("-v,--verbose", o.verbose, "Print the plan and every worker start");
  CLI::Option *rdzv_opt = nullptr, *hang_opt = nullptr, *hb_opt = nullptr;
  add_timeouts(app, o, !plan_from_env_asked(argc, argv), rdzv_opt, hang_opt, hb_opt);
  app.add_flag("--no-prefix", o.no_prefix, "Do not prefix worker output lines with [rank R]")->envname("SDDP_NO_PREFIX");
  app.add_option("--output-ranks", o.output_ranks, "Only these ranks' output reaches the terminal, e.g. 0,4-7")
      ->envname("SDDP_OUTPUT_RANKS");
  app.add_option("--log-dir", o.log_dir, "Also write each rank's output to DIR/rank-R.out and .err")
      ->envname("SDDP_LOG_DIR");
  app.add_flag("--one-gpu-per-worker", o.one_gpu,
               "Each worker sees only its own GPU (CUDA_VISIBLE_DEVICES; the script must then use cuda:0)")
      ->envname("SDDP_ONE_GPU_PER_WORKER");
  app.add_option("command", o.command, "The worker command line, after --")->required();
  nproc_opt->excludes(env_opt);
  app.footer("Example: ddp-agent --nproc 2 -- /usr/bin/python3 train.py");
  CLI11_PARSE(app, argc, argv);
  o.grace_given = grace_opt->count() > 0;
  o.rdzv_given = rdzv_opt->count() > 0;
  o.heartbeat_given = hb_opt->count() > 0;
  o.hang_given = hang_opt->count() > 0;
  return std::nullopt;
}

// Under Slurm: the plan the spank_ddp plugin put in the environment, and the
// step's rendezvous secret (made by srun, spank_ddp's local context).
Status plan_from_env(const Options& o, agent::AgentSpec& config) {
  auto plan = read_plan(Environment::from_envp(environ));
  if (!plan) return fail(plan.error());
  config.plan = std::move(plan).value();
  config.plan.verbose = config.plan.verbose || o.verbose;
  // The site's StopGrace unless the command line says otherwise.
  if (!o.grace_given) config.grace = std::chrono::milliseconds(config.plan.stop_grace_ms);
  const char* secret = std::getenv("SLURM_DDP_SECRET");
  if (secret && rdzv::check_secret(secret)) {
    config.secret = secret;
  } else if (config.plan.nnodes == 1) {
    config.secret = rdzv::random_hex(32);  // nobody else to meet
  } else {
    return fail(std::string("SLURM_DDP_SECRET is ") + (secret ? "malformed" : "missing") +
                " in the step's environment, so the nodes cannot authenticate each other: srun "
                "must load spank_ddp.so too (the same plugstack.conf on login and compute nodes)");
  }
  return Ok{};
}

// One machine (like torchrun --standalone): the plan from the command line.
Status standalone_plan(const Options& o, agent::AgentSpec& config) {
  if (o.nproc == 0) return fail("say how many workers to start: --nproc N (or run under Slurm with srun --ddp)");
  NodePlan& plan = config.plan;
  plan.run_id = "standalone-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
  plan.mode = Mode::Cpu;
  plan.nproc = plan.world_size = o.nproc;
  plan.master_addr = o.master_addr;
  // Without --master-port, a search through the default PortRange (outside
  // the kernel's ephemeral ports) from a slot of this process's own, claimed
  // as a Slurm step's is: a port the kernel hands out for bind(0) is one any
  // outgoing connection may take before PyTorch binds it (EADDRINUSE in
  // TCPStore, when many connections are made on the same machine).
  plan.step_id = std::uint32_t(getpid());
  plan.master_port = o.master_port ? o.master_port : ddp::derive_port(plan.port_range, 0, plan.step_id, 0);
  plan.max_restarts = o.max_restarts;
  plan.verbose = o.verbose;
  config.standalone = true;
  config.secret = rdzv::random_hex(32);
  if (o.master_port) {  // a fixed MASTER_PORT for every attempt
    plan.master_port_fixed = true;
  }
  return Ok{};
}

// The agent's configuration from the options: an error says why there is none.
Result<agent::AgentSpec> config_from(const Options& o, std::optional<rlimit> workers_nofile) {
  agent::AgentSpec config;
  config.command = o.command;
  config.workers_nofile = workers_nofile;
  config.grace = std::chrono::milliseconds(std::int64_t(o.grace_s * 1000));
  config.output.prefix = !o.no_prefix;
  config.output.log_dir = o.log_dir;
  config.one_gpu_per_worker = o.one_gpu;
  if (!o.output_ranks.empty()) {
    auto ranks = agent::parse_rank_list(o.output_ranks);
    if (!ranks) return fail("--output-ranks: " + ranks.error());
    config.output.ranks = std::move(ranks).value();
  }
  if (auto ok = o.from_env ? plan_from_env(o, config) : standalone_plan(o, config); !ok) return fail(ok.error());
  if (o.rdzv_given) config.plan.rdzv_timeout_ms = std::uint32_t(o.rdzv_timeout_s * 1000);
  if (o.heartbeat_given) config.plan.heartbeat_timeout_ms = std::uint32_t(o.heartbeat_timeout_s * 1000);
  // Under Slurm the plan's (the plugin has weighed --ddp-hang-timeout against
  // SDDP_HANG_TIMEOUT and the site's default).
  if (o.hang_given && !o.from_env) config.plan.hang_timeout_ms = std::uint32_t(o.hang_timeout_s * 1000);
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  // The pre-flight's helper modes (checks/checks.hpp), run by the agent itself.
  if (argc >= 2 && std::string_view(argv[1]) == "--preflight-gemm") return agent::run_gemm_check(argc, argv);
  if (argc >= 2 && std::string_view(argv[1]) == "--preflight-send") return agent::run_send_check(argc, argv);
  const auto err_sink = agent::log_through_sink(2);
  const auto workers_nofile = ddp::raise_open_files_limit();
  Options options;
  if (const auto code = parse_command_line(argc, argv, options)) return *code;
  auto config = config_from(options, workers_nofile);
  if (!config) {
    spdlog::error("{}", config.error());
    return 2;
  }
  auto spec = std::move(config).value();
  spec.output.err_sink = err_sink;  // the workers' stderr and the agent's messages, in one order
  return agent::run_agent(std::move(spec));
}
