// The node agent's class, shared by the two files that implement it:
// agent.cpp (the lifecycle, setting up, serving, leaving) and
// agent_workers.cpp (this node's workers, their output and failures, the
// duties beside them). Nothing else includes it: agent.hpp is the interface.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "agent.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "duties/bad_node_reporter.hpp"
#include "duties/hang_monitor.hpp"
#include "duties/health_check.hpp"
#include "duties/job_report.hpp"
#include "duties/load_watch.hpp"
#include "duties/preflight_checks.hpp"
#include "duties/requeue.hpp"
#include "duties/time_limit_watch.hpp"
#include "event_loop.hpp"
#include "lifecycle.hpp"
#include "rendezvous/coordinator.hpp"
#include "rendezvous/rdzv_client.hpp"
#include "signals.hpp"
#include "workers/attempt.hpp"
#include "workers/output.hpp"
#include "workers/run_files.hpp"
#include "workers/worker_failure.hpp"
#include "workers/worker_group.hpp"
#include "workers/worker_stop.hpp"

namespace ddp::agent {

// This agent's binary (/proc/self/exe): the pre-flight's helper modes
// (checks/checks.hpp), the NCCL profiler plugin beside it.
std::string self_binary();

class Agent {
 public:
  explicit Agent(AgentSpec spec);
  int run();

 private:
  // Setting up, serving, leaving.
  std::optional<int> set_up();
  Status make_run_files();
  Status start_coordinator();
  void start_client();
  Status serve();
  bool may_leave(std::optional<std::chrono::steady_clock::time_point>& linger_until);
  // The lifecycle (lifecycle.hpp): every event goes through step().
  bool step(Event event);
  void on_signal();
  void on_start(const rdzv::Start& start);
  void on_stop(std::uint32_t attempt);
  void on_done(const Verdict& verdict);
  void on_lost(const std::string& why);
  void on_check(const rdzv::Order& check);
  void tick_preflight();
  void tick_taken_out();
  void on_worker_exits();
  void tick_stopping();
  void stopped();
  // This node's workers, and their failures as values (wire/failure.hpp).
  Status start_workers();
  void watch_output();
  void update_output_flow();
  FailureSite site() const;
  std::string error_file(std::uint32_t local) const;
  void report_exit(const WorkerExit& exit);
  void report_failure(const Failure& failure);
  // The duties beside the workers.
  std::vector<std::optional<Progress>> progress(bool ended_too) const;
  std::vector<bool> ended() const;
  void tick_hang_watch();
  void begin_hang(Hang hang);
  void report_hang();
  void tell_if_untouched();
  void tick_health_check();
  void tick_load_watch();

  const AgentSpec spec_;
  const std::string host_;
  EventLoop loop_;
  SignalFd signals_;
  WorkerGroup group_;
  OutputRouter output_;
  RunFiles files_;
  std::optional<Coordinator> coordinator_;
  std::optional<RdzvClient> client_;
  Attempt attempt_;                               // the current one, from its START
  std::vector<std::optional<WorkerExit>> exits_;  // this attempt's, by local rank
  WorkerStop stop_;  // while life_.stopping_workers
  HangMonitor hang_;
  HealthCheck health_;
  LoadWatch load_;  // the workers' time on and waiting for a CPU, to node 0 in LOADs
  std::vector<std::string> nccl_files_;  // GPU steps: each worker's collective-time file (LoadWatch reads them)
  Requeuer requeue_;
  BadNodeReporter bad_nodes_;  // node 0: to its slurmstepd (a requeue's ExcNodeList, the BadNodeHook)
  PreflightChecks preflight_;  // node 0's CHECKCPU and CHECKNET, and the transfers to this node, before attempt 0
  JobReport report_;  // node 0: why Slurm stopped the step; the verdict in the job's Comment
  TimeLimitWatch time_limit_;  // node 0: the job's time limit, said while srun still listens
  Lifecycle life_;  // the state and what goes with it (lifecycle.hpp)
  bool output_paused_ = false;  // the workers' pipes are out of the loop: their output is held
};

}  // namespace ddp::agent
