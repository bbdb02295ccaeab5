#include "agent.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>

#include "command.hpp"
#include "coordinator.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/node/affinity.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"
#include "ddp/plan/roster.hpp"
#include "ddp/plan/worker_env.hpp"
#include "ddp/wire/progress_file.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "event_loop.hpp"
#include "hang_watch.hpp"
#include "lifecycle.hpp"
#include "rdzv_client.hpp"
#include "requeue.hpp"
#include "worker_group.hpp"

namespace ddp::agent {

namespace {

// Signals the agent handles itself (through a signalfd) instead of dying:
// terminating ones end the run, USR1/USR2 (preemption warnings from
// `sbatch --signal`) are forwarded while the run goes on.
constexpr int kTerminating[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr int kForwarded[] = {SIGUSR1, SIGUSR2};

class SignalFd {
 public:
  SignalFd() {
    sigemptyset(&handled_);
    sigaddset(&handled_, SIGCHLD);
    sigaddset(&handled_, SIGPIPE);  // a closed pipe or socket is an error return, not death
    for (int s : kTerminating) sigaddset(&handled_, s);
    for (int s : kForwarded) sigaddset(&handled_, s);
    sigprocmask(SIG_BLOCK, &handled_, &previous_);
    fd_ = signalfd(-1, &handled_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalFd() {
    if (fd_ >= 0) close(fd_);
    sigprocmask(SIG_SETMASK, &previous_, nullptr);
  }
  int fd() const { return fd_; }
  const sigset_t& previous_mask() const { return previous_; }
  // The next pending signal, or 0.
  int next() {
    signalfd_siginfo info{};
    if (read(fd_, &info, sizeof info) != sizeof info) return 0;
    return int(info.ssi_signo);
  }

 private:
  sigset_t handled_{};
  sigset_t previous_{};
  int fd_ = -1;
};

bool terminating(int sig) {
  for (int s : kTerminating)
    if (s == sig) return true;
  return false;
}

std::string local_time(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

using Clock = std::chrono::steady_clock;
// After SIGKILL, how long to wait for the kernel to end a worker (one stuck in
// uninterruptible I/O, say) before the agent goes on without it.
constexpr std::chrono::seconds kKillWait{5};
// --ddp-hang-timeout: how often the progress files are looked at, and how
// long the stalled workers get to print their stacks and die of SIGABRT.
constexpr std::chrono::milliseconds kHangCheckEvery{250};
constexpr std::chrono::seconds kHangReportWait{3};

// --ddp-requeue, node 0: Slurm's warning came; requeue once every worker has
// ended (saved), or at `by` at the latest, then hold until Slurm's SIGTERM so
// that srun does not return and the batch script not go on. (Outside Agent:
// clang cannot default-construct a nested struct with member initializers in
// optional::emplace while the enclosing class is incomplete.)
struct Requeueing {
  std::chrono::steady_clock::time_point by;
  Requeue scontrol;
  bool done = false;                                                // requeued
  std::optional<std::chrono::steady_clock::time_point> hold_until;  // after a requeue
};

// --ddp-hang-timeout (hang_watch.hpp): the stalled workers got SIGABRT for
// their stacks; the hang is reported once they have all ended (their stacks
// then in the output) or at `report_by`.
struct HangReport {
  Hang hang;
  std::chrono::steady_clock::time_point report_by;
};

// With the hang watch on, room in the stderr tails for a stack dump of
// several threads (faulthandler prints every one).
AgentConfig with_stack_room(AgentConfig config) {
  if (config.plan.hang_timeout_ms > 0 && config.output.tail_lines > 0)
    config.output.tail_lines = std::max<std::size_t>(config.output.tail_lines, 200);
  return config;
}

class Agent {
 public:
  explicit Agent(AgentConfig config)
      : config_(with_stack_room(std::move(config))),
        plan_(config_.plan),
        output_(config_.output),
        host_(host_name()) {}

  int run();

 private:
  std::optional<int> set_up();
  CoordinatorConfig coordinator_config() const;
  Status start_coordinator();
  void start_client();
  Status serve();
  bool may_leave(std::optional<Clock::time_point>& linger_until);
  void on_signal();
  void on_start(const StartOrder& order);
  void on_stop(std::uint32_t attempt);
  void on_done(int code, const std::string& cause);
  void on_lost(const std::string& why);
  void on_worker_exits();
  // Feeds `event` to the lifecycle (lifecycle.hpp) and carries out what it
  // says; false when the event means nothing in the current state.
  bool step(Event event);
  void tick_stopping();
  void stopped();
  void on_warning(int sig);
  void tick_requeue();
  void tick_hang_watch();
  void start_health_check(std::uint32_t rank, const std::string& what);
  void tick_health_check();
  std::vector<std::optional<Progress>> last_progress() const;
  void begin_hang(Hang hang);
  void tell_if_untouched();
  bool hang_settled() const;
  void report_hang();
  void report_failure(std::uint32_t local, int code, const std::string& what, WallClock::time_point when,
                      const FailureReport& hang_fields = {});
  std::string progress_file(std::uint32_t local) const;
  Status start_workers();
  void watch_output();
  std::string error_file(std::uint32_t local) const;

  AgentConfig config_;
  NodePlan& plan_;
  EventLoop loop_;
  SignalFd signals_;
  WorkerGroup group_{config_.workers_nofile};
  OutputRouter output_;
  std::optional<Coordinator> coordinator_;
  std::optional<RdzvClient> client_;
  std::string host_;
  std::string ifname_;
  std::string error_dir_;
  std::uint32_t capacity_ = config_.plan.nproc;  // the workers this node can run (its plan's)
  std::vector<std::uint32_t> group_workers_;  // from START, by group rank
  // Stopping the workers is a state of the event loop, not a wait: the first
  // signal now, SIGKILL when the grace is over, the lifecycle's WorkersStopped
  // once the last worker is reaped. Heartbeats, the coordinator and the
  // workers' output (a checkpoint being written, its log lines) go on meanwhile.
  // In force while life_.stopping_workers.
  struct StopTimers {
    Clock::time_point kill_at;
    std::optional<Clock::time_point> given_up_at;  // SIGKILL sent; wait at most until then
  };
  StopTimers stop_;
  std::optional<Requeueing> requeue_;
  std::optional<HangReport> hang_;
  // The site's HealthCheck, run after this node's first worker failure of an
  // attempt; STOPPED waits for its verdict ("" = healthy, or what it said).
  Command health_check_;
  std::optional<std::string> health_verdict_;
  std::vector<std::optional<WorkerExit>> exits_;  // this attempt's, by local rank
  WallClock::time_point attempt_started_;
  Clock::time_point next_hang_check_;
  bool told_untouched_ = false;  // node 0 said that no worker signals progress
  Lifecycle life_;  // the state and what goes with it (lifecycle.hpp)
  std::uint32_t attempt_ = 0;
};

std::string Agent::progress_file(std::uint32_t local) const {
  return error_dir_ + "/attempt_" + std::to_string(attempt_) + "/rank_" + std::to_string(plan_.rank_base + local) +
         "/progress";
}

std::string Agent::error_file(std::uint32_t local) const {
  return error_dir_ + "/attempt_" + std::to_string(attempt_) + "/rank_" + std::to_string(plan_.rank_base + local) +
         "/error.json";
}

Status Agent::start_workers() {
  const Environment base = Environment::from_envp(environ);
  std::vector<WorkerGroup::Launch> launches(plan_.nproc);
  output_.reset();
  for (std::uint32_t local = 0; local < plan_.nproc; ++local) {
    auto& launch = launches[local];
    launch.env = worker_environment(base, plan_, {local, attempt_}, ifname_);
    launch.env.unset("SLURM_DDP_SECRET");  // the agents', not the workers'
    // Under Slurm, Slurm's task variables as if each worker were a task
    // (DDP_KEEP_TASK_ENV=1: the node's one task's, PMI included).
    if (!config_.standalone && base.get("DDP_KEEP_TASK_ENV") != "1")
      apply_slurm_worker_view(launch.env, plan_, local, group_workers_);
    // torch's @record writes a worker's exception here; the root cause points at it.
    const auto file = error_file(local);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    launch.env.set("TORCHELASTIC_ERROR_FILE", file);
    if (plan_.hang_timeout_ms > 0) {
      // The worker's progress signal: a file it touches (ddp-train every step;
      // a script in one line: pathlib.Path(os.environ["DDP_PROGRESS_FILE"]).touch()).
      const auto progress = progress_file(local);
      (void)create_progress_file(progress);  // a file that cannot be made reads as never touched
      launch.env.set("DDP_PROGRESS_FILE", progress);
      launch.env.set_default("PYTHONFAULTHANDLER", "1");  // SIGABRT then prints every thread's stack
    }
    if (local < plan_.placements.size()) {
      const auto& place = plan_.placements[local];
      if (config_.one_gpu_per_worker && !place.gpu.empty()) launch.env.set("CUDA_VISIBLE_DEVICES", place.gpu);
      if (!place.cpus.empty()) {
        if (auto mask = cpu_mask(place.cpus))
          launch.cpus = *mask;
        else
          spdlog::warn("worker {} left unbound: {}", local, mask.error());
      }
    }
    auto ends = output_.add_worker(local, plan_.rank_base + local);
    if (!ends) return fail(ends.error());
    launch.stdout_fd = ends->out;
    launch.stderr_fd = ends->err;
  }
  if (const auto warning = output_.take_warning()) spdlog::warn("{}", *warning);
  if (plan_.verbose)
    spdlog::info("node {} ({}): attempt {}: starting {} worker(s), ranks {}..{} of {}, MASTER_ADDR={} MASTER_PORT={}{}",
                 plan_.node_rank, host_, attempt_, plan_.nproc, plan_.rank_base, plan_.rank_base + plan_.nproc - 1,
                 plan_.world_size, plan_.master_addr, plan_.master_port,
                 ifname_.empty() ? "" : ", interface " + ifname_);
  attempt_started_ = WallClock::now();
  hang_.reset();
  exits_.assign(plan_.nproc, std::nullopt);
  auto started = group_.start(config_.command, launches, signals_.previous_mask(),
                              [this](std::uint32_t local) { output_.close_child_ends(local); });
  watch_output();
  return started;
}

void Agent::watch_output() {
  for (const int fd : output_.read_fds()) {
    auto added = loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) {
      if (!output_.on_readable(fd)) loop_.remove(fd);
    });
    if (!added) spdlog::warn("worker output will be lost: {}", added.error());
  }
}

bool Agent::step(Event event) {
  const Transition t = next_state(life_, event);
  if (t.ignored) return false;
  life_ = t.next;
  if (t.kill_workers) {
    group_.signal_all(SIGKILL);
    if (life_.stopping_workers) stop_.kill_at = Clock::now();
  }
  if (t.report_stopped) {
    client_->report_stopped(attempt_, health_verdict_.value_or(""));
    health_verdict_.reset();
  }
  if (t.signal_workers) {
    stop_ = StopTimers{Clock::now() + config_.grace, std::nullopt};
    group_.signal_all(t.signal_workers);
    tick_stopping();
  }
  return true;
}

// From the loop (every 100 ms) and on SIGCHLD while stopping.
void Agent::tick_stopping() {
  if (!life_.stopping_workers) return;
  group_.reap();
  if (group_.running() == 0) return stopped();
  const auto now = Clock::now();
  if (!stop_.given_up_at && now >= stop_.kill_at) {
    if (plan_.verbose)
      spdlog::warn("node {}: {} worker(s) still running after the {} ms grace: SIGKILL", plan_.node_rank,
                   group_.running(), config_.grace.count());
    group_.signal_all(SIGKILL);
    stop_.given_up_at = now + kKillWait;
  } else if (stop_.given_up_at && now >= *stop_.given_up_at) {
    spdlog::warn("node {}: {} worker(s) did not end {} s after SIGKILL (stuck in the kernel?); going on without them",
                 plan_.node_rank, group_.abandon_running(), kKillWait.count());
    stopped();
  }
}

void Agent::stopped() {
  for (const int fd : output_.read_fds()) loop_.remove(fd);
  output_.drain();
  tell_if_untouched();
  step({.kind = Event::WorkersStopped, .health_running = health_check_.running()});
}

void Agent::on_start(const StartOrder& order) {
  if (!step({Event::Start})) return;  // not while workers run or stop
  const auto seat = seat_of(order.group_nodes, order.group_workers, plan_.node_rank);
  if (!seat || (*seat && seat->value().workers > capacity_)) {
    spdlog::error("the rendezvous sent a layout that does not fit this node: {}",
                  seat ? std::to_string(seat->value().workers) + " workers for a node that runs " +
                             std::to_string(capacity_)
                       : seat.error());
    step({Event::Misfit});
    return;
  }
  attempt_ = order.attempt;
  if (!*seat) {
    // A spare (--ddp-spares): no workers in this attempt; a later START may
    // give this node a lost node's group.
    if (plan_.verbose)
      spdlog::info("node {} ({}): spare in attempt {}: waiting to take a lost node's place", plan_.node_rank, host_,
                   attempt_);
    step({Event::Spare});
    return;
  }
  group_workers_ = order.group_workers;
  plan_.nproc = seat->value().workers;
  plan_.group_rank = seat->value().group_rank;
  plan_.groups = seat->value().groups;
  plan_.rank_base = seat->value().rank_base;
  plan_.world_size = seat->value().world_size;
  if (order.master_addr != plan_.master_addr) {
    // Gloo/NCCL bind to the interface that reaches the workers' MASTER_ADDR.
    if (const auto route = route_to(order.master_addr); route) ifname_ = route->interface;
  }
  plan_.master_addr = order.master_addr;
  plan_.master_port = order.master_port;
  if (auto ok = start_workers(); !ok) {
    spdlog::error("node {} ({}): {}", plan_.node_rank, host_, ok.error());
    // Tell the others; this node's "worker" failed to start.
    FailureReport report;
    report.attempt = attempt_;
    report.rank = plan_.rank_base;
    report.what = "could not be started: " + ok.error();
    report.time = local_time(WallClock::now());
    client_->report_failure(report);
    step({Event::StartFailed});
    return;
  }
  step({Event::Started});
}

// The first failure on this node: report it, then stop our other workers at
// once rather than waiting for the coordinator's STOP.
void Agent::report_failure(std::uint32_t local, int code, const std::string& what, WallClock::time_point when,
                           const FailureReport& hang_fields) {
  output_.drain();
  std::string tail;
  const auto lines = output_.stderr_tail(local);
  // A hang's stack dump from its start (the thread SIGABRT hit comes first),
  // else the last lines. The report is one protocol line (16 KiB at most).
  const auto dump = hang_fields.stalled_since_ms ? dump_start(lines) : lines.size();
  for (std::size_t i = dump < lines.size() ? dump : 0; i < lines.size(); ++i) tail += lines[i] + "\n";
  constexpr std::size_t kMaxTail = 4096;
  if (tail.size() > kMaxTail)
    tail = dump < lines.size() ? tail.substr(0, kMaxTail) + "..." : "..." + tail.substr(tail.size() - kMaxTail);
  const auto file = error_file(local);
  FailureReport report = hang_fields;
  report.attempt = attempt_;
  report.rank = plan_.rank_base + local;
  report.local_rank = local;
  report.code = code;
  report.what = what;
  report.time = local_time(when);
  report.tail = std::move(tail);
  report.error_file = std::filesystem::exists(file) ? file : "";
  client_->report_failure(report);
  start_health_check(report.rank, what);
  step({.kind = Event::WorkerFailed, .value = code});
}

// HealthCheck= (ddp.conf): is the node itself at fault? Run while the workers
// stop, as the job's user, with the failure in DDP_HEALTH_FAILED_RANK and
// DDP_HEALTH_FAILURE; exit 0: healthy. Its verdict goes with STOPPED.
void Agent::start_health_check(std::uint32_t rank, const std::string& what) {
  health_verdict_.reset();
  if (plan_.health_check.empty() || health_check_.running()) return;
  Environment env = Environment::from_envp(environ);
  env.unset_prefix(kPlanPrefix);
  env.unset("SLURM_DDP_SECRET");
  env.set("DDP_HEALTH_FAILED_RANK", std::to_string(rank));
  env.set("DDP_HEALTH_FAILURE", what);
  if (auto ok = health_check_.start({plan_.health_check}, std::chrono::milliseconds(plan_.health_check_timeout_ms),
                                    "(HealthCheck= in the site config)", &env);
      !ok)
    health_verdict_ = "its HealthCheck " + plan_.health_check + " could not be started: " + ok.error();
}

void Agent::tick_health_check() {
  const auto outcome = health_check_.poll();
  if (!outcome) return;
  std::string said = outcome->said;
  if (const auto nl = said.rfind('\n'); nl != std::string::npos) said = said.substr(nl + 1);  // its last line
  if (outcome->ok) {
    health_verdict_ = "";
  } else {
    health_verdict_ = "its HealthCheck " + plan_.health_check + " " +
                      (outcome->timed_out ? "did not finish within " +
                                                seconds_text(std::chrono::milliseconds(plan_.health_check_timeout_ms))
                                          : "failed") +
                      (said.empty() ? "" : ": " + said);
    spdlog::error("node {} ({}) is unhealthy: {}", plan_.node_rank, host_, *health_verdict_);
  }
  step({.kind = Event::HealthVerdict, .health_running = health_check_.running()});  // STOPPED, if it waited for the verdict
}

void Agent::on_worker_exits() {
  if (life_.state == AgentState::Stopping) return tick_stopping();
  for (const auto& exit : group_.reap()) {
    if (exit.local_rank < exits_.size()) exits_[exit.local_rank] = exit;
    if (!exit.failed() || !watching_workers(life_) || hang_) continue;
    // With the hang watch on, a death next to a rank already stalled is the
    // hang's consequence (a stalled rank elsewhere was stopped, and the
    // collective it never joined failed here): the hang is the cause.
    if (plan_.hang_timeout_ms > 0) {
      if (auto hang = find_hang(last_progress(), attempt_started_, WallClock::now(),
                                std::chrono::milliseconds(plan_.hang_timeout_ms))) {
        begin_hang(std::move(*hang));
        continue;
      }
    }
    return report_failure(exit.local_rank, exit.status_code(), exit.describe(), exit.when);
  }
  if (hang_ && watching_workers(life_) && hang_settled()) return report_hang();
  if (life_.state == AgentState::Running && group_.running() == 0) {
    output_.drain();
    tell_if_untouched();
    client_->report_finished(attempt_);
    step({Event::AllFinished});
  }
}

void Agent::on_stop(std::uint32_t attempt) {
  if (attempt == attempt_) step({Event::StopOrder});  // an earlier attempt's STOP is stale
}

void Agent::on_done(int code, const std::string& cause) {
  // One root cause for the whole job: node 0's agent prints it.
  if (!cause.empty() && coordinator_) spdlog::error("root cause: {}", cause);
  if (!cause.empty() && !coordinator_ && plan_.verbose) spdlog::info("stopping: {}", cause);
  step({.kind = Event::Verdict, .value = code, .workers_running = group_.running() > 0});
}

void Agent::on_lost(const std::string& why) {
  // Node 0 cannot be replaced: it hosts the rendezvous, and MASTER_ADDR is
  // its address, fixed for every agent and worker when the step began.
  const bool welcomed_once = attempt_ > 0 || life_.state != AgentState::Rendezvous;
  if ((plan_.spares > 0 || plan_.min_nodes > 0) && plan_.node_rank != 0 && welcomed_once)
    spdlog::error("{}; this node stops its workers: either node 0 is down, which ends the run (no spare can "
                  "replace node 0: it hosts the rendezvous and MASTER_ADDR), or this node was cut off, and the run "
                  "goes on without it",
                  why);
  else
    spdlog::error("{}", why);
  step({.kind = Event::Lost, .workers_running = group_.running() > 0});
}

// USR1/USR2, which `sbatch --signal` sends ahead of the time limit or a
// preemption: with --ddp-requeue node 0 requeues the job once the workers
// have saved and ended, or when RequeueWait is up.
void Agent::on_warning(int sig) {
  if (!plan_.requeue || !coordinator_ || config_.standalone || requeue_ || plan_.job_id == 0) return;
  // After the verdict the run is over (a warning in node 0's last second
  // must not send a finished job round again).
  if (life_.state == AgentState::Done || coordinator_->verdict()) return;
  requeue_.emplace();
  requeue_->by = Clock::now() + std::chrono::milliseconds(plan_.requeue_wait_ms);
  spdlog::info("node 0: {} (Slurm's warning): job {} is requeued once every worker has ended, in {} s at most",
               signal_name(sig), plan_.job_id, plan_.requeue_wait_ms / 1000);
}

void Agent::tick_requeue() {
  if (!requeue_ || requeue_->done) return;
  if (requeue_->scontrol.running()) {
    const auto result = requeue_->scontrol.poll();
    if (!result) return;
    requeue_->done = true;
    if (*result) {
      spdlog::info("job {} requeued: it goes back to the queue and resumes from its newest snapshot", plan_.job_id);
      requeue_->hold_until = Clock::now() + std::chrono::seconds(60);
    } else {
      spdlog::error("cannot requeue job {}: {}", plan_.job_id, result->error());
    }
    return;
  }
  const bool workers_done = coordinator_->verdict().has_value();
  if (!workers_done && Clock::now() < requeue_->by) return;
  if (auto started = requeue_->scontrol.start(plan_.job_id); !started) {
    requeue_->done = true;
    spdlog::error("cannot requeue job {}: {}", plan_.job_id, started.error());
  }
}

// Every kHangCheckEvery while the workers run: a rank silent for the timeout
// is a hang (hang_watch.hpp).
void Agent::tick_hang_watch() {
  if (plan_.hang_timeout_ms == 0 || !watching_workers(life_)) return;
  if (hang_) {
    if (hang_settled()) report_hang();
    return;
  }
  if (Clock::now() < next_hang_check_) return;
  next_hang_check_ = Clock::now() + kHangCheckEvery;
  if (auto hang = find_hang(last_progress(), attempt_started_, WallClock::now(),
                            std::chrono::milliseconds(plan_.hang_timeout_ms)))
    begin_hang(std::move(*hang));
}

// Once the attempt's workers have ended: node 0 says (once) if none of them
// ever signalled progress, so the watch never started.
void Agent::tell_if_untouched() {
  if (plan_.hang_timeout_ms == 0 || plan_.node_rank != 0 || told_untouched_ || exits_.empty()) return;
  for (std::uint32_t local = 0; local < plan_.nproc; ++local)
    if (read_progress(progress_file(local)).value_or(Progress{}).last != WallClock::time_point{}) return;
  told_untouched_ = true;
  spdlog::warn("{}", untouched_warning(plan_.node_rank, std::chrono::milliseconds(plan_.hang_timeout_ms)));
}

// Each worker's last progress; nullopt for one that has ended well.
std::vector<std::optional<Progress>> Agent::last_progress() const {
  std::vector<std::optional<Progress>> last(plan_.nproc);
  for (std::uint32_t local = 0; local < plan_.nproc; ++local) {
    if (local < exits_.size() && exits_[local] && !exits_[local]->failed()) continue;
    last[local] = read_progress(progress_file(local)).value_or(Progress{});
  }
  return last;
}

// SIGABRT makes Python (PYTHONFAULTHANDLER) print every thread's stack; the
// report waits for the stalled workers to end so that their stacks are in it.
void Agent::begin_hang(Hang hang) {
  spdlog::warn("node {}: rank(s) {} made no progress for {}: SIGABRT for their stacks", plan_.node_rank,
               rank_list(hang.stalled, plan_.rank_base), seconds_text(std::chrono::milliseconds(plan_.hang_timeout_ms)));
  client_->report_hanging(attempt_);  // before any rank dies of it: their peers' failures are consequences
  for (const auto& r : hang.stalled) group_.abort_for_stack(r.local);
  hang_ = HangReport{std::move(hang), Clock::now() + kHangReportWait};
}

bool Agent::hang_settled() const {
  if (Clock::now() >= hang_->report_by) return true;
  for (const auto& r : hang_->hang.stalled)
    if (!exits_[r.local]) return false;
  return true;
}

// The culprit on this node (hang_watch.hpp); the coordinator compares it
// with the other nodes' by where it stalled, its step, then how long ago.
void Agent::report_hang() {
  const Hang& hang = hang_->hang;
  output_.drain();
  std::vector<StalledIn> where;
  for (const auto& r : hang.stalled) where.push_back(where_stalled(output_.stderr_tail(r.local)));
  const std::size_t culprit = pick_culprit(hang, where);
  const std::uint32_t local = hang.stalled[culprit].local;
  const auto& exit = exits_[local];
  FailureReport fields;
  fields.stalled_since_ms = std::max<std::uint64_t>(epoch_ms(hang.stalled[culprit].last), 1);
  fields.stalled_in = std::uint32_t(where[culprit]);
  // A rank that never signalled is behind every rank that did: step 0, and
  // the oldest time (the attempt's start) among step 0's.
  fields.stalled_step = hang.stalled[culprit].never ? 0 : hang.stalled[culprit].step;
  fields.stalled = rank_list(hang.stalled, plan_.rank_base);
  const auto timeout = std::chrono::milliseconds(plan_.hang_timeout_ms);
  const auto what = describe_hang(hang, culprit, where[culprit], plan_.rank_base, plan_.node_rank, timeout) +
                    (exit ? "" : "; it survived SIGABRT");
  report_failure(local, exit ? exit->status_code() : 128 + SIGABRT, what, exit ? exit->when : WallClock::now(),
                 fields);
}

void Agent::on_signal() {
  while (const int sig = signals_.next()) {
    if (sig == SIGCHLD) {
      on_worker_exits();
    } else if (sig == SIGPIPE) {
      continue;
    } else if (!terminating(sig)) {
      group_.signal_all(sig);  // USR1/USR2: the run goes on
      on_warning(sig);
    } else {
      // Done: the code becomes 128 + sig; a second signal: SIGKILL at once;
      // the first: the workers are stopped with it (lifecycle.cpp).
      if (plan_.verbose && life_.state != AgentState::Done && !life_.stop_signal)
        spdlog::warn("node {}: received {}, stopping the workers", plan_.node_rank, signal_name(sig));
      step({.kind = Event::Signal, .value = sig});
    }
  }
}

// The loop, its signals, the route to MASTER_ADDR and the workers' error
// directory; an exit code when the agent cannot run at all.
std::optional<int> Agent::set_up() {
  if (auto ok = rdzv::check_secret(config_.secret); !ok) {
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
  if (const auto route = route_to(plan_.master_addr); route) {
    ifname_ = route->interface;
  } else {
    spdlog::warn("cannot tell which interface reaches MASTER_ADDR={}: {}; Gloo/NCCL will pick one themselves",
                 plan_.master_addr, route.error());
  }
  const char* tmp = std::getenv("TMPDIR");
  error_dir_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/ddp-agent-" + std::to_string(getuid()) + "-" +
               std::to_string(getpid());
  return std::nullopt;
}

CoordinatorConfig Agent::coordinator_config() const {
  CoordinatorConfig cc;
  cc.run_id = plan_.run_id;
  cc.secret = config_.secret;
  cc.nnodes = plan_.nnodes;
  cc.max_restarts = plan_.max_restarts;
  cc.spares = plan_.spares;
  cc.min_nodes = plan_.min_nodes;
  cc.master_addr = plan_.master_addr;
  // MasterInterface (e.g. IPoIB): the workers meet on node 0's address there,
  // which only node 0 knows; START carries it to everyone.
  if (!plan_.master_interface.empty()) {
    auto addr = interface_address(plan_.master_interface);
    if (addr)
      cc.master_addr = *addr;
    else  // said to every node once they have all arrived, not left to their timeouts
      cc.setup_error = "MasterInterface=" + plan_.master_interface + " from the site config: node 0 (" + host_ +
                       "): " + addr.error() + "; fix the site config or the node's network";
  }
  if (config_.standalone) {
    const auto addr = plan_.master_addr;
    const auto first = plan_.master_port;
    const bool fixed = plan_.master_port_fixed;
    cc.master_port = [addr, first, fixed](std::uint32_t attempt) {
      return attempt == 0 || fixed ? first : free_port(addr);
    };
  } else {
    const NodePlan plan = plan_;
    cc.master_port = [plan](std::uint32_t attempt) { return master_port_for(plan, attempt); };
  }
  cc.verbose = plan_.verbose;
  cc.rdzv_timeout = std::chrono::milliseconds(plan_.rdzv_timeout_ms);
  cc.heartbeat_timeout = std::chrono::milliseconds(plan_.heartbeat_timeout_ms);
  return cc;
}

// Node 0: the rendezvous every agent (this one too) connects to.
Status Agent::start_coordinator() {
  coordinator_.emplace(loop_, coordinator_config());
  if (auto ok = coordinator_->listen(config_.standalone ? 0 : plan_.rdzv_port); !ok) return ok;
  if (plan_.verbose)
    spdlog::info("node 0 ({}): rendezvous for {} node(s) on port {}, stop grace {} ms", host_, plan_.nnodes,
                 coordinator_->port(), config_.grace.count());
  return Ok{};
}

void Agent::start_client() {
  ClientConfig cfg;
  cfg.run_id = plan_.run_id;
  cfg.secret = config_.secret;
  cfg.node_rank = plan_.node_rank;
  cfg.nproc = plan_.nproc;
  cfg.workers = plan_.placements;
  cfg.host = host_;
  cfg.coordinator_addr = config_.standalone ? "127.0.0.1" : plan_.master_addr;
  cfg.coordinator_port = coordinator_ ? coordinator_->port() : plan_.rdzv_port;
  cfg.rdzv_timeout = std::chrono::milliseconds(plan_.rdzv_timeout_ms);
  cfg.heartbeat_timeout = std::chrono::milliseconds(plan_.heartbeat_timeout_ms);
  client_.emplace(
      loop_, std::move(cfg),
      RdzvClient::Events{[this](const StartOrder& o) { on_start(o); }, [this](std::uint32_t a) { on_stop(a); },
                         [this](int code, const std::string& cause) { on_done(code, cause); },
                         [this](const std::string& why) { on_lost(why); }});
  client_->begin();
}

// The event loop until the run is over (Done, and node 0's duties done).
Status Agent::serve() {
  std::optional<Clock::time_point> linger_until;
  for (;;) {
    if (auto ok = loop_.run_once(std::chrono::milliseconds(100)); !ok) return ok;
    if (coordinator_) coordinator_->tick();
    client_->tick();
    tick_stopping();
    tick_requeue();
    tick_hang_watch();
    tick_health_check();
    if (life_.state == AgentState::Done && may_leave(linger_until)) return Ok{};
  }
}

// Done: whether the agent may exit now. Node 0 may have to stay a while.
bool Agent::may_leave(std::optional<Clock::time_point>& linger_until) {
  if (!coordinator_ || life_.stop_signal || life_.lost) return true;
  // Requeueing: wait for scontrol, then for Slurm's SIGTERM (the job is
  // being requeued; returning now would let the batch script go on).
  if (requeue_ && (!requeue_->done || (requeue_->hold_until && Clock::now() < *requeue_->hold_until))) return false;
  // Node 0 hosts the coordinator until the verdict, then stays until every
  // other agent has read it and hung up (a second at most), so closing its
  // sockets cannot cut a message short.
  if (!coordinator_->verdict()) return false;
  life_.exit_code = coordinator_->verdict()->exit_code;  // node 0 ends with the job's verdict (lifecycle.hpp)
  if (coordinator_->open_peers() <= 1) return true;
  if (!linger_until) linger_until = Clock::now() + std::chrono::milliseconds(1000);
  return Clock::now() >= *linger_until;
}

int Agent::run() {
  if (const auto cannot = set_up()) return *cannot;
  if (plan_.node_rank == 0) {
    if (auto ok = start_coordinator(); !ok) {
      spdlog::error("node 0 ({}): {}", host_, ok.error());
      return 1;
    }
  }
  start_client();
  if (auto ok = serve(); !ok) {
    spdlog::error("{}", ok.error());
    group_.stop(config_.grace);
    return 1;
  }
  if (group_.running() > 0) group_.stop(config_.grace);
  output_.drain();
  if (life_.exit_code == 0) {
    std::error_code ec;
    std::filesystem::remove_all(error_dir_, ec);
  }
  return life_.exit_code;
}

}  // namespace

std::uint16_t free_port(const std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

int run_agent(AgentConfig config) { return Agent(std::move(config)).run(); }

}  // namespace ddp::agent
