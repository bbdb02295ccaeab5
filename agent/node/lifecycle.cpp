#include "node/lifecycle.hpp"

#include <csignal>

namespace ddp::agent {

namespace {

// Begin stopping the workers, `first_signal` first; when they are being
// stopped already, the newer decision only says what comes after.
Transition stop(Lifecycle l, std::optional<int> finish_code, int first_signal) {
  Transition t;
  l.finish_code = finish_code;
  if (!l.stopping_workers) {
    l.state = AgentState::Stopping;
    l.stopping_workers = true;
    t.signal_workers = first_signal;
  }
  t.next = l;
  return t;
}

Transition finish(Lifecycle l, int code) {
  l.exit_code = code;
  l.finish_code.reset();
  l.stopped_awaits_health = false;  // the run is over: no STOPPED, whatever the check says
  l.state = AgentState::Done;
  return {l};
}

// STOPPED goes once the HealthCheck (if one runs) has its verdict.
Transition report_stopped(Lifecycle l, bool health_running) {
  l.stopped_awaits_health = health_running;
  if (health_running) return {l};  // HealthVerdict comes back here
  l.state = AgentState::WaitOrders;
  Transition t{l};
  t.report_stopped = true;
  return t;
}

// Ends the run with `code` once no worker runs. A stop that a terminating
// signal began keeps the signal's code.
Transition finish_after_stop(const Lifecycle& l, int code, bool workers_running) {
  if (l.stop_signal) code = 128 + l.stop_signal;
  if (l.stopping_workers || workers_running) return stop(l, code, SIGTERM);
  return finish(l, code);
}

bool awaits_start(const Lifecycle& l) {
  return l.state == AgentState::Rendezvous || l.state == AgentState::WaitOrders;
}

Transition ignored(const Lifecycle& l) {
  Transition t{l};
  t.ignored = true;
  return t;
}

Transition on_signal(Lifecycle l, int sig) {
  if (l.state == AgentState::Done) {
    // After the verdict (node 0 holding for a requeue, or lingering for its
    // peers): Slurm's SIGTERM, or the user's, ends it.
    l.stop_signal = sig;
    l.exit_code = 128 + sig;
    return {l};
  }
  if (l.stop_signal) {  // a second terminating signal (Ctrl-C twice, scancel again): no more grace
    Transition t{l};
    t.kill_workers = true;
    return t;
  }
  l.stop_signal = sig;
  return stop(l, 128 + sig, sig);  // the signal itself is the workers' first: SIGINT stays SIGINT
}

}  // namespace

Transition next_state(const Lifecycle& now, const Event& e) {
  using S = AgentState;
  Lifecycle l = now;
  switch (e.kind) {
    case Event::Start:  // a check: START is taken only between attempts; what came of it follows
      return awaits_start(now) ? Transition{l} : ignored(now);
    case Event::Misfit:
      return awaits_start(now) ? finish(l, 1) : ignored(now);
    case Event::Spare:
      if (!awaits_start(now)) return ignored(now);
      l.state = S::WaitOrders;
      return {l};
    case Event::Started:
      if (!awaits_start(now)) return ignored(now);
      l.state = S::Running;
      return {l};
    case Event::StartFailed:
      return awaits_start(now) ? stop(l, std::nullopt, SIGTERM) : ignored(now);
    case Event::StopOrder:
      return now.state == S::Running ? stop(l, std::nullopt, SIGTERM) : ignored(now);
    case Event::WorkerFailed:
      if (now.state != S::Running) return ignored(now);
      l.exit_code = e.exit_code;
      return stop(l, std::nullopt, SIGTERM);
    case Event::AllFinished:
      if (now.state != S::Running) return ignored(now);
      l.state = S::WaitOrders;  // DONE (or BYE) follows at once
      return {l};
    case Event::WorkersStopped:
      l.stopping_workers = false;
      return l.finish_code ? finish(l, *l.finish_code) : report_stopped(l, e.health_running);
    case Event::HealthVerdict:
      if (!now.stopped_awaits_health || now.state == S::Done) return ignored(now);
      return report_stopped(l, e.health_running);
    case Event::Verdict:
      return finish_after_stop(l, e.exit_code, e.workers_running);
    case Event::Lost:
      l.lost = true;
      return finish_after_stop(l, l.exit_code ? l.exit_code : 1, e.workers_running);
    case Event::Signal:
      return on_signal(l, e.signal);
  }
  return ignored(now);
}

}  // namespace ddp::agent
