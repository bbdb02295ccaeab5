// The node agent (agent.hpp): its lifecycle (lifecycle.hpp) applied to every
// event, this node's workers and the duties beside them, and, on node 0, the
// coordinator (job/coordinator.hpp) it hosts and node 0's words with Slurm
// (slurm/). One class, read top to bottom: the loop, the lifecycle's events,
// the workers, the duties, setting up.
#include "node/agent.hpp"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "ddp/base/parse.hpp"
#include "ddp/node/cgroup.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "event_loop.hpp"
#include "job/coordinator.hpp"
#include "job/failure_text.hpp"
#include "node/duties/hang_watch.hpp"
#include "node/duties/health_check.hpp"
#include "node/duties/load_watch.hpp"
#include "node/duties/preflight_checks.hpp"
#include "node/lifecycle.hpp"
#include "node/signals.hpp"
#include "node/workers/attempt.hpp"
#include "node/workers/output.hpp"
#include "node/workers/run_files.hpp"
#include "node/workers/worker_failure.hpp"
#include "node/workers/worker_group.hpp"
#include "node/workers/worker_stop.hpp"
#include "rendezvous/rdzv_client.hpp"
#include "slurm/bad_node_reporter.hpp"
#include "slurm/job_report.hpp"
#include "slurm/requeue.hpp"
#include "slurm/time_limit_watch.hpp"

namespace ddp::agent {

namespace {

using Clock = std::chrono::steady_clock;

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// With the hang watch on, room in the stderr tails for a stack dump of
// several threads (faulthandler prints every one).
AgentSpec with_stack_room(AgentSpec spec) {
  if (spec.plan.hang_timeout_ms > 0 && spec.output.tail_lines > 0)
    spec.output.tail_lines = std::max<std::size_t>(spec.output.tail_lines, 200);
  return spec;
}

// This agent's binary (/proc/self/exe), for the pre-flight's helper modes
// (checks/checks.hpp) and the NCCL profiler plugin beside it; "ddp-agent"
// from PATH when /proc cannot say.
std::string self_binary() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "ddp-agent" : path.string();
}

std::string if_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? path : "";
}

// Our NCCL profiler plugin: beside this agent (a build tree, the GPU kit),
// else where the package installs it; "" when neither has it.
std::string nccl_profiler_plugin() {
  const auto beside = std::filesystem::path(self_binary()).parent_path() / "libnccl-profiler-ddp.so";
  if (auto found = if_exists(beside.string()); !found.empty()) return found;
  return if_exists(DDP_NCCL_PROFILER_PATH);
}

}  // namespace

// torchrun's agent in spirit: the spec (spec.hpp) never changes; the
// attempt and its workers are per attempt; the lifecycle decides.
class Agent {
 public:
  explicit Agent(AgentSpec spec);
  int run();

 private:
  // The loop.
  Status serve();
  bool may_leave(std::optional<Clock::time_point>& linger_until);
  // The lifecycle (lifecycle.hpp): every event goes through step().
  bool step(Event event);
  void tick_stopping();
  void stopped();
  void on_start(const rdzv::Start& start);
  void on_worker_exits();
  void on_stop(std::uint32_t attempt);
  void on_done(const Verdict& verdict);
  void on_lost(const std::string& why);
  void on_signal();
  // This node's workers, and their failures as values (ddp/wire/failure.hpp).
  std::optional<StartError> start_workers();
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
  void tick_load_watch();
  void on_check(const rdzv::Order& check);
  void tick_preflight();
  void tick_health_check();
  // Setting up; node 0's words with its slurmstepd.
  std::optional<int> set_up();
  Status make_run_files();
  Status start_coordinator();
  void start_client();
  void tick_bad_nodes();

  const AgentSpec spec_;
  const std::string host_;
  EventLoop loop_;
  SignalFd signals_;
  WorkerGroup group_;
  OutputRouter output_;
  RunFiles files_;
  std::optional<Coordinator> coordinator_;  // node 0
  std::optional<RdzvClient> client_;
  Attempt attempt_;                               // the current one, from its START
  std::vector<std::optional<WorkerExit>> exits_;  // this attempt's, by local rank
  WorkerStop stop_;                               // while life_.stopping_workers
  HangWatch hang_;
  HealthCheck health_;
  LoadWatch load_;  // the workers' time on and waiting for a CPU, to node 0 in LOADs
  std::vector<std::string> nccl_files_;  // GPU steps: each worker's collective-time file (LoadWatch reads them)
  Requeuer requeue_;
  BadNodeReporter bad_nodes_;  // node 0: to its slurmstepd (a requeue's ExcNodeList, the BadNodeHook)
  PreflightChecks preflight_;  // node 0's CHECKCPU and CHECKNET, and the transfers to this node, before attempt 0
  JobReport report_;           // node 0: why Slurm stopped the step; the verdict in the job's Comment
  TimeLimitWatch time_limit_;  // node 0: the job's time limit, said while srun still listens
  Lifecycle life_;             // the state and what goes with it (lifecycle.hpp)
  bool output_paused_ = false;  // the workers' pipes are out of the loop: their output is held
};

Agent::Agent(AgentSpec spec)
    : spec_(with_stack_room(std::move(spec))),
      host_(host_name()),
      group_(spec_.workers_nofile),
      output_(spec_.output),
      stop_(group_, spec_.grace, spec_.plan.node_rank, spec_.plan.verbose),
      hang_(std::chrono::milliseconds(spec_.plan.hang_timeout_ms)),
      health_(spec_.plan.health_check, std::chrono::milliseconds(spec_.plan.health_check_timeout_ms),
              spec_.plan.node_rank, host_),
      requeue_(spec_.plan, spec_.standalone),
      bad_nodes_(spec_.plan.bad_node_report),
      preflight_(loop_, self_binary(), spec_.secret, spec_.plan.run_id),
      report_(spec_.plan, spec_.standalone),
      time_limit_(spec_.plan, spec_.standalone) {}

// ---------------------------------------------------------------------------
// The loop

int Agent::run() {
  if (const auto cannot = set_up()) return *cannot;
  if (spec_.plan.node_rank == 0) {
    if (auto ok = start_coordinator(); !ok) {
      spdlog::error("node 0 ({}): {}", host_, ok.error());
      return 1;
    }
  }
  start_client();
  if (auto ok = serve(); !ok) {
    spdlog::error("{}", ok.error());
    group_.stop(spec_.grace);
    return 1;
  }
  if (group_.running() > 0) group_.stop(spec_.grace);
  output_.drain();
  return life_.exit_code;  // files_ goes with the agent, unless kept
}

// The event loop until the run is over (Done, and node 0's duties done).
Status Agent::serve() {
  std::optional<Clock::time_point> linger_until;
  for (;;) {
    if (auto ok = loop_.run_once(std::chrono::milliseconds(100)); !ok) return ok;
    if (coordinator_) coordinator_->tick();
    client_->tick();
    tick_stopping();
    if (coordinator_) tick_bad_nodes();
    report_.tick();
    time_limit_.tick(std::time(nullptr));
    tick_hang_watch();
    tick_health_check();
    tick_load_watch();
    tick_preflight();
    for (const auto& said : output_.tick()) spdlog::warn("node {}: {}", spec_.plan.node_rank, said);
    update_output_flow();
    if (life_.state == AgentState::Done && may_leave(linger_until)) return Ok{};
  }
}

// Done: whether the agent may exit now. Its output goes first (a reader that
// pauses is waited for, unless Slurm stops the step), and node 0 may have to
// stay a while.
bool Agent::may_leave(std::optional<Clock::time_point>& linger_until) {
  if (report_.busy() || requeue_.busy()) return false;  // slurmctld's answers, bounded
  if (life_.stop_signal) return true;
  if (!output_.written()) return false;
  if (!coordinator_ || life_.lost) return true;
  // Requeueing: wait for scontrol, then for Slurm's SIGTERM (the job is
  // being requeued; returning now would let the batch script go on).
  if (requeue_.holds()) return false;
  // Node 0 hosts the coordinator until the verdict, then stays until every
  // other agent has read it and hung up (a second at most), so closing its
  // sockets cannot cut a message short.
  if (!coordinator_->verdict()) return false;
  life_.exit_code = coordinator_->verdict()->exit_code();  // node 0 ends with the job's verdict (lifecycle.hpp)
  if (coordinator_->open_peers() <= 1) return true;
  if (!linger_until) linger_until = Clock::now() + std::chrono::milliseconds(1000);
  return Clock::now() >= *linger_until;
}

// ---------------------------------------------------------------------------
// The lifecycle

bool Agent::step(Event event) {
  const Transition t = next_state(life_, event);
  if (t.ignored) return false;
  life_ = t.next;
  if (t.kill_workers) stop_.kill_now();
  if (t.report_stopped) client_->report_stopped(attempt_.number, health_.take_verdict());
  if (t.signal_workers) {
    stop_.begin(t.signal_workers);
    tick_stopping();
  }
  return true;
}

// From the loop (every 100 ms) and on SIGCHLD while stopping.
void Agent::tick_stopping() {
  if (life_.stopping_workers && stop_.done()) stopped();
}

void Agent::stopped() {
  for (const int fd : output_.read_fds()) loop_.remove(fd);
  output_.drain();
  tell_if_untouched();
  step({.kind = Event::WorkersStopped, .health_running = health_.running()});
}

void Agent::on_start(const rdzv::Start& start) {
  if (!step({Event::Start})) return;  // not while workers run or stop
  preflight_.close_sink();  // the pre-flight is over once an attempt starts
  const auto layout = layout_for(start, spec_.plan.node_rank, spec_.plan.nproc);
  if (!layout) {
    spdlog::error("the rendezvous sent a layout that does not fit this node: {}", layout.error());
    step({Event::Misfit});
    return;
  }
  attempt_.number = start.attempt;
  if (!*layout) {
    // A spare (--ddp-spares): no workers in this attempt; a later START may
    // give this node a lost node's group.
    if (spec_.plan.verbose)
      spdlog::info("node {} ({}): spare in attempt {}: waiting to take a lost node's place", spec_.plan.node_rank,
                   host_, attempt_.number);
    step({Event::Spare});
    return;
  }
  // Gloo/NCCL bind to the interface that reaches the workers' MASTER_ADDR
  // (set_up found the one to the plan's; node 0's MasterInterface may differ).
  if (start.master_addr != spec_.plan.master_addr)
    if (const auto route = route_to(start.master_addr); route) attempt_.ifname = route->interface;
  attempt_.layout = **layout;  // every attempt's, attempt 0's too, from its START
  if (const auto error = start_workers()) {
    spdlog::error("node {} ({}): {}", spec_.plan.node_rank, host_, error->why);
    client_->report_failure(start_failure(site(), *error, 0));  // tell the others
    step({Event::StartFailed});
    return;
  }
  step({Event::Started});
}

void Agent::on_worker_exits() {
  if (life_.state == AgentState::Stopping) return tick_stopping();
  const auto reaped = group_.reap();
  for (const auto& exit : reaped)
    if (exit.local_rank < exits_.size()) exits_[exit.local_rank] = exit;
  for (const auto& exit : reaped) {
    if (!exit.failed() || !watching_workers(life_) || hang_.hang()) continue;
    // With the hang watch on, a death next to a rank already stalled is the
    // hang's consequence (a stalled rank elsewhere was stopped, and the
    // collective it never joined failed here): the hang is the cause.
    if (auto hang = hang_.find(progress(false))) {
      begin_hang(std::move(*hang));
      continue;
    }
    return report_exit(exit);
  }
  if (hang_.hang() && watching_workers(life_) && hang_.settled(ended())) return report_hang();
  if (life_.state == AgentState::Running && group_.running() == 0) {
    output_.drain();
    tell_if_untouched();
    client_->report_finished(attempt_.number);
    step({Event::AllFinished});
  }
}

void Agent::on_stop(std::uint32_t attempt) {
  if (attempt == attempt_.number) step({Event::StopOrder});  // an earlier attempt's STOP is stale
}

void Agent::on_done(const Verdict& verdict) {
  // One root cause for the whole job: node 0's agent prints it. Slurm's stop
  // (another node's agent got the signal first): slurmctld says why.
  const bool slurm_stop = verdict.cause && class_of(verdict.cause->failure) == FailureClass::SlurmStop;
  if (verdict.cause && coordinator_ && slurm_stop && report_.explains_stops()) {
    if (spec_.plan.verbose) spdlog::info("stopping: {}", describe(*verdict.cause));
    report_.on_signal(verdict.cause->failure.signal);
  } else if (verdict.cause && coordinator_) {
    spdlog::error("root cause: {}", describe(*verdict.cause));
    report_.on_verdict(*verdict.cause);
  }
  if (verdict.cause && !coordinator_ && spec_.plan.verbose) spdlog::info("stopping: {}", describe(*verdict.cause));
  step({.kind = Event::Verdict, .exit_code = verdict.exit_code(), .workers_running = group_.running() > 0});
}

void Agent::on_lost(const std::string& why) {
  // Node 0 cannot be replaced: it hosts the rendezvous, and MASTER_ADDR is
  // its address, fixed for every agent and worker when the step began.
  const bool welcomed_once = attempt_.number > 0 || life_.state != AgentState::Rendezvous;
  const auto& plan = spec_.plan;
  if ((plan.spares > 0 || plan.min_nodes > 0) && plan.node_rank != 0 && welcomed_once)
    spdlog::error("{}; this node stops its workers: either node 0 is down, which ends the run (no spare can "
                  "replace node 0: it hosts the rendezvous and MASTER_ADDR), or this node was cut off, and the run "
                  "goes on without it",
                  why);
  else
    spdlog::error("{}", why);
  step({.kind = Event::Lost, .workers_running = group_.running() > 0});
}

void Agent::on_signal() {
  while (const int sig = signals_.next()) {
    if (sig == SIGCHLD) {
      on_worker_exits();
    } else if (sig == SIGPIPE) {
      continue;
    } else if (!is_terminating(sig)) {
      group_.signal_all(sig);  // USR1/USR2: the run goes on
      if (coordinator_) requeue_.on_warning(sig, life_.state == AgentState::Done || coordinator_->verdict());
    } else {
      // Done: the code becomes 128 + sig; a second signal: SIGKILL at once;
      // the first: the workers are stopped with it (lifecycle.cpp).
      if (spec_.plan.verbose && life_.state != AgentState::Done && !life_.stop_signal)
        spdlog::warn("node {}: received {}, stopping the workers", spec_.plan.node_rank, signal_name(sig));
      // Node 0 asks slurmctld once why (a time limit, scancel...), unless it
      // requeued the job itself or the run had its verdict.
      if (coordinator_ && !requeue_.holds() && !coordinator_->verdict()) report_.on_signal(sig);
      // Said to node 0 before this node ends: Slurm's stop, not a lost node.
      if (client_ && !life_.stop_signal && life_.state != AgentState::Done && !requeue_.holds())
        client_->report_signalled(sig);
      step({.kind = Event::Signal, .signal = sig});
    }
  }
}

// ---------------------------------------------------------------------------
// This node's workers

std::optional<StartError> Agent::start_workers() {
  std::vector<std::string> warnings;
  const auto base = Environment::from_envp(environ);  // the job's, read once
  LaunchChoices choices{!spec_.standalone, spec_.one_gpu_per_worker, spec_.plan.hang_timeout_ms > 0,
                        requeue_.enabled(), ""};
  // Opt-in (SDDP_NCCL_PROFILER=1 in the job's environment) until the plugin
  // has run under a real NCCL on a GPU (the kit's row slurm-6): it goes into
  // the user's own processes, and NCCL's kernel-channel events cost it work.
  const auto opted_in = base.get("SDDP_NCCL_PROFILER") == "1";
  if (opted_in && spec_.plan.mode == Mode::Gpu && spec_.plan.stragglers != StragglerAction::Off) {
    choices.nccl_profiler = nccl_profiler_plugin();
    if (choices.nccl_profiler.empty())
      warnings.push_back("no libnccl-profiler-ddp.so beside ddp-agent or in " DDP_NCCL_PROFILER_PATH
                         ": GPU stragglers are judged by the workers' CPU time only (is the slurm-ddp package whole?)");
  }
  auto launches = worker_launches(spec_.plan, choices, attempt_, files_, base, warnings);
  nccl_files_.clear();
  for (std::uint32_t local = 0; !choices.nccl_profiler.empty() && local < launches.size(); ++local)
    nccl_files_.push_back(files_.nccl_stats_file(attempt_.number, attempt_.layout.rank_base + local));
  output_.reset();
  for (std::uint32_t local = 0; local < launches.size(); ++local) {
    auto ends = output_.add_worker(local, attempt_.layout.rank_base + local);
    if (!ends) return StartError{ends.error()};
    launches[local].stdout_fd = ends->out;
    launches[local].stderr_fd = ends->err;
  }
  for (const auto& warning : warnings) spdlog::warn("{}", warning);
  const WorkerLayout& layout = attempt_.layout;
  if (spec_.plan.verbose)
    spdlog::info("node {} ({}): attempt {}: starting {} worker(s), ranks {}..{} of {}, MASTER_ADDR={} MASTER_PORT={}{}",
                 spec_.plan.node_rank, host_, attempt_.number, layout.nproc, layout.rank_base,
                 layout.rank_base + layout.nproc - 1, layout.world_size, layout.master_addr, layout.master_port,
                 attempt_.ifname.empty() ? "" : ", interface " + attempt_.ifname);
  hang_.begin_attempt(WallClock::now());
  attempt_.oom_kills_at_start = oom_kills(getpid());
  load_.begin_attempt();
  exits_.assign(layout.nproc, std::nullopt);
  auto started = group_.start(spec_.command, launches, signals_.previous_mask(),
                              [this](std::uint32_t local) { output_.close_child_ends(local); });
  watch_output();
  return started;
}

void Agent::watch_output() {
  if (output_paused_) return;
  for (const int fd : output_.read_fds()) {
    loop_.remove(fd);  // already watched, or not
    auto added = loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) {
      if (!output_.on_readable(fd)) loop_.remove(fd);
      update_output_flow();
    });
    if (!added) spdlog::warn("worker output will be lost: {}", added.error());
  }
}

// Back-pressure (workers/sink.hpp): while a reader holds the output, the
// workers' pipes leave the loop (the workers block on their writes) and the
// hang watch waits; a sink that drained brings them back.
void Agent::update_output_flow() {
  const bool held = output_.held();
  hang_.hold(held);
  if (held == output_paused_) return;
  output_paused_ = held;
  if (!held) return watch_output();
  for (const int fd : output_.read_fds()) loop_.remove(fd);
}

FailureSite Agent::site() const {
  return {attempt_.number, spec_.plan.node_rank, host_, attempt_.layout.rank_base};
}

std::string Agent::error_file(std::uint32_t local) const {
  return if_exists(files_.error_file(attempt_.number, attempt_.layout.rank_base + local));
}

void Agent::report_exit(const WorkerExit& exit) {
  output_.drain();
  if (exit.not_started) {  // its command could not be executed
    spdlog::error("node {} ({}): {}", spec_.plan.node_rank, host_, exit.not_started->why);
    return report_failure(start_failure(site(), *exit.not_started, exit.local_rank));
  }
  // The OOM killer strikes with SIGKILL; its cgroup counts it (cgroup.hpp).
  const auto oom_now = exit.signaled && exit.signal == SIGKILL ? oom_kills(getpid()) : std::nullopt;
  const bool oom_killed = oom_now && attempt_.oom_kills_at_start && *oom_now > *attempt_.oom_kills_at_start;
  report_failure(exit_failure(site(), exit, stderr_excerpt(output_.stderr_tail(exit.local_rank)),
                              error_file(exit.local_rank), oom_killed));
}

// The first failure on this node: report it, then stop our other workers at
// once rather than waiting for the coordinator's STOP.
void Agent::report_failure(const Failure& failure) {
  if (!failure.error_file.empty()) files_.keep();  // the root cause may point at it
  client_->report_failure(failure);
  health_.start(failure.rank.value_or(attempt_.layout.rank_base), what_happened(failure));
  step({.kind = Event::WorkerFailed, .exit_code = failure.exit_code});
}

// ---------------------------------------------------------------------------
// The duties: the hang watch (--ddp-hang-timeout), the site's HealthCheck,
// the load watch (stragglers)

// Each worker's last progress; nullopt for one that has ended well (no longer
// watched), unless `ended_too`.
std::vector<std::optional<Progress>> Agent::progress(bool ended_too) const {
  std::vector<std::optional<Progress>> last(attempt_.layout.nproc);
  for (std::uint32_t local = 0; local < last.size(); ++local) {
    if (!ended_too && local < exits_.size() && exits_[local] && !exits_[local]->failed()) continue;
    const auto file = files_.progress_file(attempt_.number, attempt_.layout.rank_base + local);
    last[local] = read_progress(file).value_or(Progress{});
  }
  return last;
}

// Which of this attempt's workers have ended, by local rank.
std::vector<bool> Agent::ended() const {
  std::vector<bool> ended(exits_.size());
  for (std::size_t i = 0; i < exits_.size(); ++i) ended[i] = exits_[i].has_value();
  return ended;
}

// Every loop turn while the workers run.
void Agent::tick_hang_watch() {
  if (!hang_.on() || !watching_workers(life_)) return;
  if (hang_.hang()) {
    if (hang_.settled(ended())) report_hang();
    return;
  }
  if (!hang_.check_due()) return;
  if (auto hang = hang_.find(progress(false))) begin_hang(std::move(*hang));
}

// SIGABRT makes Python (PYTHONFAULTHANDLER) print every thread's stack; the
// report waits for the stalled workers to end so that their stacks are in it.
void Agent::begin_hang(Hang hang) {
  spdlog::warn("node {}: rank(s) {} made no progress for {}: SIGABRT for their stacks", spec_.plan.node_rank,
               rank_list(stalled_ranks(hang, attempt_.layout.rank_base)), seconds_text(hang_.timeout()));
  client_->report_hanging(attempt_.number);  // before any rank dies of it: their peers' failures are consequences
  for (const auto& r : hang.stalled) group_.abort_for_stack(r.local);
  hang_.found(std::move(hang));
}

// The culprit on this node (duties/hang_rule.hpp); node 0 compares it
// with the other nodes' by where it stalled, its step, then how long ago.
void Agent::report_hang() {
  const Hang& hang = *hang_.hang();
  output_.drain();
  std::vector<StalledIn> where;
  for (const auto& r : hang.stalled) where.push_back(where_stalled(output_.stderr_tail(r.local)));
  const std::size_t culprit = pick_culprit(hang, where);
  const std::uint32_t local = hang.stalled[culprit].local;
  report_failure(hang_failure(site(), hang, culprit, where[culprit], hang_.timeout(), exits_[local],
                              output_.stderr_tail(local), error_file(local)));
}

// Once the attempt's workers have ended: node 0 says (once) if none of them
// ever signalled progress, so the watch never started.
void Agent::tell_if_untouched() {
  if (spec_.plan.node_rank != 0 || exits_.empty()) return;
  if (const auto warning = hang_.untouched_warning_once(progress(true), spec_.plan.node_rank))
    spdlog::warn("{}", *warning);
}

// A window of the workers' CPU time, every 5 s while they run; none while
// their output is held (they may be blocked on it, not slow).
void Agent::tick_load_watch() {
  if (life_.state != AgentState::Running || spec_.plan.stragglers == StragglerAction::Off) return;
  if (output_paused_) return load_.hold();
  if (const auto load = load_.tick(attempt_.number, group_.pids(), nccl_files_)) client_->report_load(*load);
}

// --ddp-preflight: node 0's orders, before attempt 0 (no worker runs yet).
void Agent::on_check(const rdzv::Order& check) {
  if (life_.state != AgentState::Rendezvous) return;
  if (const auto refused = preflight_.start(check)) client_->report_checked(*refused);
}

void Agent::tick_preflight() {
  for (const auto& checked : preflight_.poll()) client_->report_checked(checked);
}

void Agent::tick_health_check() {
  // STOPPED, if it waited for the verdict.
  if (health_.poll()) step({.kind = Event::HealthVerdict, .health_running = health_.running()});
}

// ---------------------------------------------------------------------------
// Setting up

// The loop, its signals and the route to MASTER_ADDR; an exit code when the
// agent cannot run at all.
std::optional<int> Agent::set_up() {
  if (auto ok = rdzv::check_secret(spec_.secret); !ok) {
    spdlog::error("no usable rendezvous secret: {}", ok.error());
    return 2;
  }
  if (!loop_.ok() || signals_.fd() < 0) {
    spdlog::error("cannot set up epoll/signalfd: {}", std::strerror(errno));
    return 1;
  }
  if (auto ok = loop_.add(signals_.fd(), EPOLLIN, [this](std::uint32_t) { on_signal(); }); !ok) {
    spdlog::error("{}", ok.error());
    return 1;
  }
  for (const int fd : output_.drained_fds()) {
    auto ok = loop_.add(fd, EPOLLIN, [this](std::uint32_t) {
      output_.clear_drained();
      update_output_flow();
    });
    if (!ok) {
      spdlog::error("{}", ok.error());
      return 1;
    }
  }
  if (auto ok = make_run_files(); !ok) {
    spdlog::error("{}", ok.error());
    return 1;
  }
  if (const auto route = route_to(spec_.plan.master_addr); route)
    attempt_.ifname = route->interface;
  else
    spdlog::warn("cannot tell which interface reaches MASTER_ADDR={}: {}; Gloo/NCCL will pick one themselves",
                 spec_.plan.master_addr, route.error());
  return std::nullopt;
}

// The workers' run files, in a directory only this agent's user can enter
// (workers/run_files.hpp). Without one the workers get no error files, which
// is said; the hang watch cannot run without progress files, which stops the
// agent: the user asked for it.
Status Agent::make_run_files() {
  auto files = RunFiles::make();
  if (files) {
    files_ = std::move(files).value();
    return Ok{};
  }
  const std::string fix = "point TMPDIR at a directory the job's user may write";
  if (hang_.on()) return fail(files.error() + "; the hang watch needs it for the workers' progress files: " + fix);
  spdlog::warn("{}; the workers get no TORCHELASTIC_ERROR_FILE ({})", files.error(), fix);
  return Ok{};
}

// Node 0: the rendezvous every agent (this one too) connects to.
Status Agent::start_coordinator() {
  coordinator_.emplace(loop_, spec_.plan,
                       CoordinatorSettings::for_plan(spec_.plan, spec_.secret, spec_.standalone, host_));
  const auto candidates = spec_.standalone ? std::vector<std::uint16_t>{0} : rdzv_candidates(spec_.plan);
  if (auto ok = coordinator_->listen(candidates, spec_.plan.port_range); !ok) return ok;
  if (spec_.plan.verbose)
    spdlog::info("node 0 ({}): rendezvous for {} node(s) on port {}, stop grace {} ms", host_, spec_.plan.nnodes,
                 coordinator_->port(), spec_.grace.count());
  return Ok{};
}

void Agent::start_client() {
  auto ports = coordinator_ ? std::vector<std::uint16_t>{coordinator_->port()} : rdzv_candidates(spec_.plan);
  auto config = ClientConfig::for_plan(spec_.plan, spec_.secret, spec_.standalone, host_, std::move(ports));
  if (const char* name = std::getenv("SLURMD_NODENAME"); name && !spec_.standalone) config.join.slurm_node = name;
  if (spec_.plan.preflight != PreflightAction::Off) config.join.check_port = preflight_.open_sink();
  client_.emplace(loop_, std::move(config),
                  RdzvClient::Events{[this](const rdzv::Start& s) { on_start(s); },
                                     [this](std::uint32_t a) { on_stop(a); },
                                     [this](const Verdict& v) { on_done(v); },
                                     [this](const std::string& why) { on_lost(why); },
                                     [this](const rdzv::Order& check) { on_check(check); }});
  client_->begin();
}

// Node 0: the bad nodes, to node 0's slurmstepd, which keeps them out of a
// requeue and tells the site's BadNodeHook.
void Agent::tick_bad_nodes() {
  const auto& bad = coordinator_->bad_nodes();
  std::vector<std::string> names;
  for (const auto& node : bad) names.push_back(node.node);
  bad_nodes_.tick(bad);  // first: a requeue ends the step, and slurmstepd reads them then
  requeue_.tick(coordinator_->verdict().has_value(), names);
}

int run_agent(AgentSpec spec) { return Agent(std::move(spec)).run(); }


}  // namespace ddp::agent
