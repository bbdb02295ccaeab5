// The agent's lifecycle (agent/node/lifecycle.hpp) driven event by event: every
// state, what moves it, and what each move asks the agent to do.
#include <csignal>

#include "node/lifecycle.hpp"
#include "suites.hpp"

using namespace ddp::agent;

namespace {

using S = AgentState;

// Feeds `e` to `l` and returns the transition; `l` takes on its next state.
Transition feed(Lifecycle& l, Event e) {
  const Transition t = next_state(l, e);
  l = t.next;
  return t;
}

Event workers_stopped(bool health_running = false) { return {.kind = Event::WorkersStopped, .health_running = health_running}; }

// Rendezvous -> Running, the workers started.
Lifecycle running() {
  Lifecycle l;
  ck_assert(!feed(l, {Event::Start}).ignored);
  feed(l, {Event::Started});
  ck_assert(l.state == S::Running);
  return l;
}

}  // namespace

START_TEST(a_run_that_finishes_ends_done_with_0) {
  Lifecycle l = running();
  ck_assert(watching_workers(l));
  const auto t = feed(l, {Event::AllFinished});
  ck_assert(!t.ignored && !t.report_stopped && t.signal_workers == 0);
  ck_assert(l.state == S::WaitOrders);
  ck_assert(!watching_workers(l));
  feed(l, {.kind = Event::Verdict, .exit_code = 0, .workers_running = false});  // DONE 0: nothing left to stop
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 0);
  ck_assert(!l.lost && l.stop_signal == 0);
}
END_TEST

START_TEST(a_failure_stops_reports_stopped_and_a_restart_runs_again) {
  Lifecycle l = running();
  auto t = feed(l, {.kind = Event::WorkerFailed, .exit_code = 7});
  ck_assert(l.state == S::Stopping && l.stopping_workers);
  ck_assert_int_eq(t.signal_workers, SIGTERM);
  ck_assert_int_eq(l.exit_code, 7);
  ck_assert(!watching_workers(l));  // no second failure report, no hang watch
  ck_assert(feed(l, {.kind = Event::WorkerFailed, .exit_code = 9}).ignored);
  ck_assert(feed(l, {Event::StopOrder}).ignored);  // STOP for a node stopping already
  ck_assert(feed(l, {Event::Start}).ignored);      // no START while workers stop
  for (const auto kind : {Event::Started, Event::Spare, Event::Misfit, Event::StartFailed}) {
    ck_assert(feed(l, {kind}).ignored);  // nor anything that comes of one
    ck_assert(l.state == S::Stopping && l.stopping_workers);
  }
  t = feed(l, workers_stopped());
  ck_assert(t.report_stopped);
  ck_assert(l.state == S::WaitOrders && !l.stopping_workers);
  ck_assert(!feed(l, {Event::Start}).ignored);  // the next attempt
  feed(l, {Event::Started});
  ck_assert(l.state == S::Running);
}
END_TEST

START_TEST(a_stop_order_then_the_verdict_ends_with_its_code) {
  Lifecycle l = running();
  auto t = feed(l, {Event::StopOrder});  // a failure elsewhere
  ck_assert_int_eq(t.signal_workers, SIGTERM);
  ck_assert(l.state == S::Stopping);
  // Restarts exhausted: DONE while the workers still stop; no second signal.
  t = feed(l, {.kind = Event::Verdict, .exit_code = 5, .workers_running = true});
  ck_assert_int_eq(t.signal_workers, 0);
  ck_assert(l.state == S::Stopping);
  ck_assert(l.finish_code == 5);
  t = feed(l, workers_stopped());
  ck_assert(!t.report_stopped);  // the run is over: no STOPPED
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 5);
}
END_TEST

START_TEST(restarts_exhausted_after_stopped_end_with_the_failures_code) {
  Lifecycle l = running();
  feed(l, {.kind = Event::WorkerFailed, .exit_code = 3});
  feed(l, workers_stopped());
  ck_assert(l.state == S::WaitOrders);
  feed(l, {.kind = Event::Verdict, .exit_code = 3, .workers_running = false});
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 3);
  ck_assert(feed(l, {Event::Start}).ignored);  // nothing starts after the verdict
}
END_TEST

START_TEST(a_spare_waits_for_orders_and_may_be_seated_later) {
  Lifecycle l;
  ck_assert(!feed(l, {Event::Start}).ignored);
  feed(l, {Event::Spare});
  ck_assert(l.state == S::WaitOrders);
  ck_assert(!watching_workers(l));
  ck_assert(feed(l, {Event::StopOrder}).ignored);    // it runs nothing to stop
  ck_assert(feed(l, {Event::AllFinished}).ignored);  // nor to finish
  ck_assert(!feed(l, {Event::Start}).ignored);       // a lost node's group
  feed(l, {Event::Started});
  ck_assert(l.state == S::Running);
}
END_TEST

START_TEST(a_layout_that_does_not_fit_ends_with_1) {
  Lifecycle l;
  feed(l, {Event::Start});
  feed(l, {Event::Misfit});
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 1);
}
END_TEST

START_TEST(workers_that_cannot_start_are_stopped_and_reported) {
  Lifecycle l;
  feed(l, {Event::Start});
  const auto t = feed(l, {Event::StartFailed});
  ck_assert(l.state == S::Stopping);
  ck_assert_int_eq(t.signal_workers, SIGTERM);
  ck_assert(feed(l, workers_stopped()).report_stopped);
  ck_assert(l.state == S::WaitOrders);
}
END_TEST

START_TEST(the_health_check_defers_stopped_until_its_verdict) {
  Lifecycle l = running();
  feed(l, {.kind = Event::WorkerFailed, .exit_code = 7});
  auto t = feed(l, workers_stopped(true));  // the HealthCheck still runs
  ck_assert(!t.report_stopped);
  ck_assert(l.state == S::Stopping && !l.stopping_workers && l.stopped_awaits_health);
  ck_assert(feed(l, {.kind = Event::HealthVerdict, .health_running = true}).ignored == false);
  ck_assert(l.state == S::Stopping);  // still running: still waiting
  t = feed(l, {.kind = Event::HealthVerdict, .health_running = false});
  ck_assert(t.report_stopped);
  ck_assert(l.state == S::WaitOrders && !l.stopped_awaits_health);
  ck_assert(feed(l, {Event::HealthVerdict}).ignored);  // a verdict nobody waits for
}
END_TEST

START_TEST(the_verdict_during_the_health_check_ends_without_stopped) {
  Lifecycle l = running();
  feed(l, {.kind = Event::WorkerFailed, .exit_code = 7});
  feed(l, workers_stopped(true));
  const auto t = feed(l, {.kind = Event::Verdict, .exit_code = 7, .workers_running = false});
  ck_assert(!t.report_stopped && t.signal_workers == 0);
  ck_assert(l.state == S::Done && !l.stopped_awaits_health);
  ck_assert_int_eq(l.exit_code, 7);
  ck_assert(feed(l, {Event::HealthVerdict}).ignored);  // no STOPPED after Done
}
END_TEST

START_TEST(a_lost_coordinator_stops_the_workers_and_ends_with_1) {
  Lifecycle l = running();
  auto t = feed(l, {.kind = Event::Lost, .exit_code = 0, .workers_running = true});
  ck_assert(l.lost);
  ck_assert_int_eq(t.signal_workers, SIGTERM);
  ck_assert(l.state == S::Stopping);
  t = feed(l, workers_stopped());
  ck_assert(!t.report_stopped);
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 1);
  // Lost before any worker ran: Done at once; after a failure: its code.
  Lifecycle early;
  feed(early, {.kind = Event::Lost, .exit_code = 0, .workers_running = false});
  ck_assert(early.state == S::Done && early.lost);
  ck_assert_int_eq(early.exit_code, 1);
  Lifecycle failed = running();
  feed(failed, {.kind = Event::WorkerFailed, .exit_code = 9});
  feed(failed, {.kind = Event::Lost, .exit_code = 0, .workers_running = true});
  feed(failed, workers_stopped());
  ck_assert_int_eq(failed.exit_code, 9);
}
END_TEST

START_TEST(a_signal_stops_the_workers_with_itself_and_ends_with_128_plus_it) {
  Lifecycle l = running();
  auto t = feed(l, {.kind = Event::Signal, .signal = SIGINT});
  ck_assert_int_eq(t.signal_workers, SIGINT);  // the workers' first signal is the agent's own
  ck_assert(l.state == S::Stopping);
  ck_assert_int_eq(l.stop_signal, SIGINT);
  t = feed(l, {.kind = Event::Signal, .signal = SIGTERM});  // a second one: no more grace
  ck_assert(t.kill_workers);
  ck_assert_int_eq(t.signal_workers, 0);
  feed(l, {.kind = Event::Verdict, .exit_code = 3, .workers_running = true});  // the signal's code wins over the verdict's
  feed(l, workers_stopped());
  ck_assert(l.state == S::Done);
  ck_assert_int_eq(l.exit_code, 128 + SIGINT);

  Lifecycle term = running();
  ck_assert_int_eq(feed(term, {.kind = Event::Signal, .signal = SIGTERM}).signal_workers, SIGTERM);
  feed(term, workers_stopped());
  ck_assert_int_eq(term.exit_code, 143);
}
END_TEST

START_TEST(a_signal_while_stopping_or_done_changes_only_the_end) {
  Lifecycle l = running();
  feed(l, {.kind = Event::WorkerFailed, .exit_code = 7});
  auto t = feed(l, {.kind = Event::Signal, .signal = SIGTERM});
  ck_assert_int_eq(t.signal_workers, 0);  // stopping already
  ck_assert(!t.kill_workers);
  ck_assert(!feed(l, workers_stopped()).report_stopped);  // the run ends instead of STOPPED
  ck_assert_int_eq(l.exit_code, 143);
  Lifecycle done = running();
  feed(done, {Event::AllFinished});
  feed(done, {.kind = Event::Verdict, .exit_code = 0, .workers_running = false});
  t = feed(done, {.kind = Event::Signal, .signal = SIGTERM});  // node 0 holding for a requeue
  ck_assert(done.state == S::Done);
  ck_assert_int_eq(done.exit_code, 143);
  ck_assert_int_eq(done.stop_signal, SIGTERM);
  ck_assert(!t.kill_workers && t.signal_workers == 0);
}
END_TEST

START_TEST(a_hang_is_reported_once_like_a_failure) {
  // The hang watch runs while the workers are watched; its report (128 +
  // SIGABRT when the culprit died of it) stops them like a failure.
  Lifecycle l = running();
  ck_assert(watching_workers(l));
  const auto t = feed(l, {.kind = Event::WorkerFailed, .exit_code = 128 + SIGABRT});
  ck_assert_int_eq(t.signal_workers, SIGTERM);
  ck_assert(!watching_workers(l));  // no second report, no hang watch while stopping
  ck_assert_int_eq(l.exit_code, 134);
  ck_assert(feed(l, {.kind = Event::WorkerFailed, .exit_code = 1}).ignored);
  ck_assert_int_eq(l.exit_code, 134);
}
END_TEST

Suite* lifecycle_suite() {
  return make_suite(
      "lifecycle",
      {a_run_that_finishes_ends_done_with_0, a_failure_stops_reports_stopped_and_a_restart_runs_again,
       a_stop_order_then_the_verdict_ends_with_its_code, restarts_exhausted_after_stopped_end_with_the_failures_code,
       a_spare_waits_for_orders_and_may_be_seated_later, a_layout_that_does_not_fit_ends_with_1,
       workers_that_cannot_start_are_stopped_and_reported, the_health_check_defers_stopped_until_its_verdict,
       the_verdict_during_the_health_check_ends_without_stopped, a_lost_coordinator_stops_the_workers_and_ends_with_1,
       a_signal_stops_the_workers_with_itself_and_ends_with_128_plus_it, a_signal_while_stopping_or_done_changes_only_the_end,
       a_hang_is_reported_once_like_a_failure});
}
