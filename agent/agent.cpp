// The node agent (agent.hpp): its lifecycle applied to every event, setting
// up, serving, leaving. Its work on the workers is in agent_workers.cpp; the
// class in agent_impl.hpp.
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "agent_impl.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"

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

}  // namespace

// "ddp-agent" from PATH when /proc cannot say.
std::string self_binary() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "ddp-agent" : path.string();
}

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
      preflight_(loop_, self_binary()),
      report_(spec_.plan, spec_.standalone),
      time_limit_(spec_.plan, spec_.standalone) {
  attempt_.layout = planned_layout(spec_.plan);
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
  // Gloo/NCCL bind to the interface that reaches the workers' MASTER_ADDR.
  if (start.master_addr != attempt_.layout.master_addr)
    if (const auto route = route_to(start.master_addr); route) attempt_.ifname = route->interface;
  attempt_.layout = **layout;
  if (auto ok = start_workers(); !ok) {
    spdlog::error("node {} ({}): {}", spec_.plan.node_rank, host_, ok.error());
    client_->report_failure(start_failure(site(), ok.error()));  // tell the others
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
  step({.kind = Event::Verdict, .value = verdict.exit_code(), .workers_running = group_.running() > 0});
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
      step({.kind = Event::Signal, .value = sig});
    }
  }
}

// ---------------------------------------------------------------------------
// Setting up, serving, leaving

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
  coordinator_.emplace(loop_, CoordinatorConfig::for_plan(spec_.plan, spec_.secret, spec_.standalone, host_));
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
  if (const char* name = std::getenv("SLURMD_NODENAME"); name && !spec_.standalone) config.slurm_node = name;
  if (spec_.plan.preflight != PreflightAction::Off) config.check_port = preflight_.open_sink();
  client_.emplace(loop_, std::move(config),
                  RdzvClient::Events{[this](const rdzv::Start& s) { on_start(s); },
                                     [this](std::uint32_t a) { on_stop(a); },
                                     [this](const Verdict& v) { on_done(v); },
                                     [this](const std::string& why) { on_lost(why); },
                                     [this](const rdzv::Order& check) { on_check(check); }});
  client_->begin();
}

// Node 0: the nodes taken out for cause, to node 0's slurmstepd, which keeps
// them out of a requeue and tells the site's BadNodeHook.
void Agent::tick_taken_out() {
  const auto& out = coordinator_->taken_out();
  std::vector<std::string> names;
  for (const auto& bad : out) names.push_back(bad.node);
  bad_nodes_.tick(out);  // first: a requeue ends the step, and slurmstepd reads them then
  requeue_.tick(coordinator_->verdict().has_value(), names);
}

// The event loop until the run is over (Done, and node 0's duties done).
Status Agent::serve() {
  std::optional<Clock::time_point> linger_until;
  for (;;) {
    if (auto ok = loop_.run_once(std::chrono::milliseconds(100)); !ok) return ok;
    if (coordinator_) coordinator_->tick();
    client_->tick();
    tick_stopping();
    if (coordinator_) tick_taken_out();
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

int run_agent(AgentSpec spec) { return Agent(std::move(spec)).run(); }

}  // namespace ddp::agent
