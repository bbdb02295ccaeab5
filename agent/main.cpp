// ddp-agent: one per node. Starts the node's workers with torchrun's
// environment contract, watches them, stops them all when one fails.
//
//   ddp-agent --nproc 4 -- python train.py        standalone, one machine
//   (under Slurm the spank_ddp plugin execs:  ddp-agent --plan-from-env -- CMD)
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "agent.hpp"
#include "worker_group.hpp"
#include "ddp/limits.hpp"
#include "ddp/rdzv_protocol.hpp"
#include "ddp/version.hpp"

using namespace ddp;

int main(int argc, char** argv) {
  auto logger = spdlog::stderr_logger_st("ddp-agent");
  logger->set_pattern("ddp-agent: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  const auto workers_nofile = ddp::raise_open_files_limit();

  CLI::App app{"ddp-agent: starts and supervises the data-parallel workers of one node"};
  app.set_version_flag("--version", std::string("ddp-agent ") + kVersion);
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

  auto* nproc_opt = app.add_option("--nproc", nproc, "Workers to start on this machine (standalone)")
                        ->check(CLI::Range(1u, std::uint32_t(kMaxWorkersPerNode)));
  app.add_option("--master-addr", master_addr, "MASTER_ADDR for the workers (standalone)")->capture_default_str();
  app.add_option("--master-port", master_port, "MASTER_PORT (standalone; default: a free port)");
  app.add_option("--max-restarts", max_restarts, "Restart all workers up to N times after a failure")
      ->check(CLI::Range(0u, std::uint32_t(kMaxRestarts)));
  auto* grace_opt = app.add_option("--grace", grace_s, "Seconds between SIGTERM and SIGKILL when stopping workers")
                        ->check(CLI::Range(0.0, 3600.0))
                        ->capture_default_str();
  auto* env_opt = app.add_flag("--plan-from-env", from_env,
                               "Take the plan from DDP_PLAN_* variables (set by the spank_ddp Slurm plugin)");
  app.add_flag("-v,--verbose", verbose, "Print the plan and every worker start");
  auto* rdzv_opt = app.add_option("--rdzv-timeout", rdzv_timeout_s, "Seconds for every node's agent to arrive (60)")
                       ->check(CLI::Range(1.0, 3600.0));
  auto* hang_opt = app.add_option("--hang-timeout", hang_timeout_s,
                                  "Seconds without progress (DDP_PROGRESS_FILE untouched) after which a worker is "
                                  "a hang: its stack is dumped and the run stops (0: off, the default)")
                       ->check(CLI::Range(0.0, 3600.0))
                       ->envname("DDP_HANG_TIMEOUT");
  auto* hb_opt = app.add_option("--heartbeat-timeout", heartbeat_timeout_s,
                                "Seconds of silence after which a node is declared lost (5)")
                     ->check(CLI::Range(1.0, 3600.0));
  app.add_flag("--no-prefix", no_prefix, "Do not prefix worker output lines with [rank R]")->envname("DDP_NO_PREFIX");
  app.add_option("--output-ranks", output_ranks, "Only these ranks' output reaches the terminal, e.g. 0,4-7")
      ->envname("DDP_OUTPUT_RANKS");
  app.add_option("--log-dir", log_dir, "Also write each rank's output to DIR/rank-R.out and .err")
      ->envname("DDP_LOG_DIR");
  app.add_flag("--one-gpu-per-worker", one_gpu,
               "Each worker sees only its own GPU (CUDA_VISIBLE_DEVICES; the script must then use cuda:0)")
      ->envname("DDP_ONE_GPU_PER_WORKER");
  app.add_option("command", command, "The worker command line, after --")->required();
  nproc_opt->excludes(env_opt);
  app.footer("Example: ddp-agent --nproc 2 -- /usr/bin/python3 train.py");
  CLI11_PARSE(app, argc, argv);

  agent::AgentConfig config;
  config.command = command;
  config.workers_nofile = workers_nofile;
  config.grace = std::chrono::milliseconds(std::int64_t(grace_s * 1000));
  config.output.prefix = !no_prefix;
  config.output.log_dir = log_dir;
  config.one_gpu_per_worker = one_gpu;
  if (!output_ranks.empty()) {
    auto ranks = agent::parse_rank_list(output_ranks);
    if (!ranks) {
      spdlog::error("--output-ranks: {}", ranks.error());
      return 2;
    }
    config.output.ranks = std::move(ranks).value();
  }

  if (from_env) {
    auto plan = read_plan(Environment::from_envp(environ));
    if (!plan) {
      spdlog::error("{}", plan.error());
      return 2;
    }
    config.plan = std::move(plan).value();
    config.plan.verbose = config.plan.verbose || verbose;
    // The site's StopGrace unless the command line says otherwise.
    if (grace_opt->count() == 0) config.grace = std::chrono::milliseconds(config.plan.stop_grace_ms);
    // The step's rendezvous secret, made by srun (spank_ddp's local context).
    const char* secret = std::getenv("SLURM_DDP_SECRET");
    if (secret && rdzv::check_secret(secret)) {
      config.secret = secret;
    } else if (config.plan.nnodes == 1) {
      config.secret = rdzv::random_hex(32);  // nobody else to meet
    } else {
      spdlog::error(
          "SLURM_DDP_SECRET is {} in the step's environment, so the nodes cannot authenticate each other: srun "
          "must load spank_ddp.so too (the same plugstack.conf on login and compute nodes)",
          secret ? "malformed" : "missing");
      return 2;
    }
  } else {
    if (nproc == 0) {
      spdlog::error("say how many workers to start: --nproc N (or run under Slurm with srun --ddp)");
      return 2;
    }
    NodePlan& plan = config.plan;
    plan.run_id = "standalone-" + std::to_string(getpid()) + "-" + std::to_string(std::time(nullptr));
    plan.mode = Mode::Cpu;
    plan.nproc = plan.world_size = nproc;
    plan.master_addr = master_addr;
    plan.master_port = master_port ? master_port : agent::free_port(master_addr);
    if (plan.master_port == 0) {
      spdlog::error("no free TCP port on {}; give one with --master-port", master_addr);
      return 2;
    }
    plan.max_restarts = max_restarts;
    plan.verbose = verbose;
    config.standalone = true;
    config.secret = rdzv::random_hex(32);
    if (master_port) {  // a fixed MASTER_PORT for every attempt
      plan.master_port_fixed = true;
    }
  }
  if (rdzv_opt->count()) config.plan.rdzv_timeout_ms = std::uint32_t(rdzv_timeout_s * 1000);
  if (hb_opt->count()) config.plan.heartbeat_timeout_ms = std::uint32_t(heartbeat_timeout_s * 1000);
  // Under Slurm the plan's (the plugin has weighed --ddp-hang-timeout against
  // DDP_HANG_TIMEOUT and the site's default): the job's DDP_HANG_TIMEOUT must
  // not win over srun's option here.
  if (hang_opt->count() && !from_env) config.plan.hang_timeout_ms = std::uint32_t(hang_timeout_s * 1000);
  return agent::run_agent(std::move(config));
}
