// The node agent's lifecycle in one place: its states, the events that move
// it, and what each move asks the agent to do. Pure (no I/O, no clock), so the
// unit tests drive it directly; agent.cpp feeds it every event and carries out
// the actions. The coordinator (coordinator.hpp) speaks the same words for the
// job as a whole: Rendezvous, Running, Stopping, Done.
//
//   Rendezvous --Start--> Running | WaitOrders (a spare) | Stopping (workers
//                         could not start) | Done(1) (a layout that misfits)
//   Running --(failure, STOP, signal, DONE, lost)--> Stopping
//   Stopping --WorkersStopped--> WaitOrders (STOPPED sent; deferred while the
//                                HealthCheck runs) | Done (the run is over)
//   Running --AllFinished--> WaitOrders (DONE or BYE follows)
//   WaitOrders --Start--> as from Rendezvous (the next attempt)
//   any --Verdict/Lost/Signal--> Stopping (workers still running) or Done
//   Done --Signal--> Done (only the exit code changes)
//
// The transitions carry the actions on the workers and STOPPED; agent.cpp
// sends FAIL (before WorkerFailed, StartFailed) and FINISHED (before
// AllFinished) itself, as those carry what only it knows (the failed rank,
// its stderr). Node 0 ends with the coordinator's verdict (agent.cpp:
// may_leave), the same code its own DONE carried.
//
// Rendezvous: connect to the coordinator, prove the step's secret, JOIN with
//             this node's worker count; START brings ranks and MASTER_*.
// Running:    workers run; their output is routed (rank prefixes, log files,
//             the stderr tail); signals are forwarded. The first failure here
//             is reported (FAIL) and the node's workers are stopped at once;
//             STOP from the coordinator (a failure elsewhere, a lost node)
//             stops them too.
// Stopping:   SIGTERM sent (or the terminating signal the agent got), SIGKILL
//             at the end of the grace; the loop keeps serving meanwhile:
//             heartbeats, node 0's coordinator, the workers' output. Then
//             STOPPED to the coordinator (or Done, when the run is over).
// WaitOrders: stopped; the coordinator answers with START (a new attempt on a
//             fresh MASTER_PORT) or DONE (the verdict and the one root cause).
// Done:       exit with the verdict's code. All workers exiting 0 ends the run
//             at once (FINISHED), with no exit barrier holding the allocation.
#pragma once

#include <optional>

namespace ddp::agent {

enum class AgentState { Rendezvous, Running, Stopping, WaitOrders, Done };

// The state and the facts that go with it (no loose flags beside it).
// Stopping has two halves: the workers being stopped (stopping_workers), then,
// when a HealthCheck still runs, STOPPED waiting for its verdict
// (stopped_awaits_health); in Stopping one of the two is always true.
struct Lifecycle {
  AgentState state = AgentState::Rendezvous;
  // Stopping: the workers are being stopped (signal sent, grace, SIGKILL); false
  // once the last one is reaped (STOPPED may still wait for the HealthCheck).
  bool stopping_workers = false;
  // What comes once they are stopped: the end of the run with this code, or
  // (nullopt) STOPPED to the coordinator and its next order.
  std::optional<int> finish_code;
  bool stopped_awaits_health = false;  // workers stopped; STOPPED waits for the HealthCheck's verdict
  int stop_signal = 0;                 // the terminating signal that ends the run (SIGTERM, SIGINT...)
  bool lost = false;                   // the coordinator is lost (unreachable, silent, refused us)
  int exit_code = 0;                   // the agent's exit code so far
};

struct Event {
  enum Kind {
    Start,           // START arrived (the next events say what came of it)
    Misfit,          // START's layout does not fit this node -> Done(1)
    Spare,           // START gives this node no workers -> WaitOrders
    Started,         // this node's workers were started -> Running
    StartFailed,     // they could not be (agent.cpp sent FAIL) -> Stopping
    StopOrder,       // STOP for this attempt -> Stopping
    WorkerFailed,    // this attempt's first failure here (`exit_code`: its code) -> Stopping
    AllFinished,     // every worker exited 0 (agent.cpp sent FINISHED) -> WaitOrders
    WorkersStopped,  // the last worker reaped -> WaitOrders (STOPPED) or Done
    HealthVerdict,   // the HealthCheck ended -> STOPPED if it waited for it
    Verdict,         // DONE or BYE (`exit_code`: the job's) -> Done once stopped
    Lost,            // the coordinator is lost -> Done once stopped
    Signal,          // a terminating signal (`signal`) -> Done(128 + signal) once stopped
  };
  Kind kind;
  int exit_code = 0;             // WorkerFailed, Verdict
  int signal = 0;                // Signal
  bool workers_running = false;  // Verdict, Lost: whether any worker still runs
  bool health_running = false;   // WorkersStopped, HealthVerdict: whether the HealthCheck still runs
};

// What the agent must do for a transition, besides taking on `next`.
struct Transition {
  Lifecycle next;
  bool ignored = false;         // the event means nothing in this state
  int signal_workers = 0;       // begin stopping the workers: this signal first, SIGKILL after the grace
  bool kill_workers = false;    // SIGKILL now, no more grace (a second terminating signal)
  bool report_stopped = false;  // send STOPPED (with the HealthCheck's verdict)
};

Transition next_state(const Lifecycle& now, const Event& event);

// Whether this node's workers are watched for a failure or a hang: while they
// run and until the attempt's first failure here is reported (that stops them).
inline bool watching_workers(const Lifecycle& l) { return l.state == AgentState::Running; }

}  // namespace ddp::agent
