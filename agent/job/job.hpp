// Node 0's decisions for the whole job, as one state machine. Pure: no
// sockets, no clock, no log (the caller passes the time with each event), so
// the unit tests drive every decision directly (tests/unit/test_job.cpp).
//
// Its events are what the nodes' agents report (JOIN, FAIL, HANGING,
// STOPPED, FINISHED, SIGNALLED), what node 0 sees of the nodes itself (a
// connection ended, a node silent past the heartbeat timeout, the rendezvous
// timed out, a node of another release), and the verdicts of node 0's
// watches (a straggler, the pre-flight). Its actions are node 0's orders:
// start an attempt (the first, or a restart: on the same nodes, with a spare
// in a bad node's place, or with fewer nodes), stop every node, release a
// node (BYE), cut a lost node off, begin the pre-flight, and the verdict
// (DONE). The coordinator (coordinator.hpp) carries them out over the
// rendezvous.
//
// The phases, in the agents' words (node/lifecycle.hpp):
//
//   Rendezvous --every JOIN--> Preflight (--ddp-preflight) | Running (START)
//   Preflight  --its verdicts--> Running (START) | Done
//   Running    --a failure, a lost node, Slurm's stop--> Stopping (STOP)
//   Running    --every node FINISHED--> Done (success)
//   Stopping   --every node STOPPED--> Running (a restart: START) | Done
//
// What happens after a failure is decided in job.cpp: the failure classes'
// policy (policy_of) and the restart rule (after_stop) at its top.
//
// Words: a node is *blamed* for a failure that was its own fault (a CUDA or
// NCCL error, a straggler, a slow pre-flight); blamed twice, or unhealthy, or
// swapped out, it is *taken out* of the run and becomes a *bad node*
// (bad_nodes(): a requeue keeps it out of the job, the site's BadNodeHook
// hears of it). A *lost* node stopped answering; its place goes to a *spare*,
// or the run goes on with fewer nodes (--ddp-min-nodes), or ends.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ddp/plan/roster.hpp"
#include "ddp/wire/bad_node_report.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/node_plan.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "job/preflight.hpp"
#include "job/straggler.hpp"

namespace ddp::agent {

// What a failure class means for the run: whether --ddp-restarts applies,
// whether it counts against the node it happened on, and its words.
struct ClassPolicy {
  bool restart = true;
  bool blame_node = false;
  const char* words = "";  // "the script's own exception (a Python traceback)"
};
ClassPolicy policy_of(FailureClass cls);
// "class host_oom: out of host memory (...); --ddp-restarts applies; not the node's fault"
std::string class_line(FailureClass cls);

namespace job {

// ---- events ----------------------------------------------------------------

struct Joined {  // JOIN: what the node brings
  std::uint32_t node = 0;
  rdzv::Join join;
};
struct Failed {  // FAIL: the node's first failure in an attempt
  std::uint32_t node = 0;
  Failure failure;
};
struct HangNoticed {  // HANGING: the node's hang watch fired; its report follows
  std::uint32_t node = 0;
  std::uint32_t attempt = 0;
};
struct Stopped {  // STOPPED: its workers are stopped; `unhealthy`: its HealthCheck failed, saying this
  std::uint32_t node = 0;
  std::uint32_t attempt = 0;
  std::string unhealthy;
};
struct Finished {  // FINISHED: every worker of the node exited 0
  std::uint32_t node = 0;
  std::uint32_t attempt = 0;
};
struct Signalled {  // SIGNALLED: its agent got a terminating signal (Slurm's stop)
  std::uint32_t node = 0;
  int signal = 0;
};
struct Disconnected {  // its agent's connection ended
  std::uint32_t node = 0;
  std::string why;
};
struct Silent {  // no message from it for the heartbeat timeout
  std::uint32_t node = 0;
  std::string why;
};
struct OtherRelease {  // a node of this step runs another release: `why` names both
  std::string why;
};
struct RendezvousTimedOut {
  std::chrono::milliseconds after{0};
};
struct CannotStart {  // node 0 cannot start the attempt (no MASTER_PORT, START too large): why, and the fix
  std::string why;
};
struct StragglerNamed {  // the straggler watch named a node (already said)
  StragglerVerdict verdict;
};
struct PreflightDone {  // the pre-flight is over: the nodes it named (already said)
  std::vector<PreflightVerdict> named;
};
struct Tick {};  // time passes: a hang's reports are weighed until their deadline

using Event = std::variant<Joined, Failed, HangNoticed, Stopped, Finished, Signalled, Disconnected, Silent,
                           OtherRelease, RendezvousTimedOut, CannotStart, StragglerNamed, PreflightDone, Tick>;

// ---- actions ---------------------------------------------------------------

struct Start {  // START for `attempt` to every node, with the roster's groups (Job::roster())
  std::uint32_t attempt = 0;
  bool roster_changed = false;  // since the last START (--ddp-verbose prints the plan again)
};
struct Stop {  // STOP to every node
  std::uint32_t attempt = 0;
};
struct Release {  // BYE: the node may leave (its workers finished, or it was taken out)
  std::uint32_t node = 0;
};
struct CutOff {  // a lost node: its connection is closed, and a new one refused
  std::uint32_t node = 0;
  std::string why;
};
struct BeginPreflight {};  // the checks before attempt 0 (preflight_run.hpp)
struct Say {               // a warning for node 0's log
  std::string text;
};
struct Done {  // DONE to every node: the job's verdict
  Verdict verdict;
};

using Action = std::variant<Start, Stop, Release, CutOff, BeginPreflight, Say, Done>;

enum class Phase { Rendezvous, Preflight, Running, Stopping, Done };

// The failures that were a node's own fault, by node. One bad GPU or link
// fails a job again and again, and a restart on the same nodes only repeats
// it; a single transient error is forgiven: blamed twice, a node is taken out.
class BlameBook {
 public:
  static constexpr std::size_t kLimit = 2;
  // Records one blame; true when it is the node's kLimit-th (take it out now).
  bool blame(std::uint32_t node, std::string why);
  // "cuda_nccl in attempt 0; a straggler in attempt 1"
  std::string reasons(std::uint32_t node) const;

 private:
  std::map<std::uint32_t, std::vector<std::string>> book_;
};

// What node 0 knows of one node.
struct Node {
  std::optional<rdzv::Join> join;  // its JOIN, once it came
  bool lost = false;               // never used again in this step
  bool finished = false;           // in this attempt
  bool left = false;               // its connection ended after it finished
  int signalled = 0;               // its agent's terminating signal: its end is Slurm's stop, not a loss
  std::optional<std::uint32_t> stopped_attempt;
  std::optional<std::uint32_t> failed_attempt;  // it reported a failure in that attempt
  std::optional<Failure> failure;               // its first one in this attempt (what ran its HealthCheck)
};

// A hang report's suspicion, the smaller the likelier: where it stalled
// (StalledIn: elsewhere, unknown, collective), then the step its progress
// file names (the one behind; the largest value when it wrote none), then
// its last progress in ms since the epoch.
struct HangSuspicion {
  std::uint64_t stalled_in = 1;
  std::uint64_t step = ~0ull;
  std::uint64_t since_ms = 0;
  auto operator<=>(const HangSuspicion&) const = default;
};
HangSuspicion suspicion_of(const HangFacts& hang);

// A hang's reports being weighed (note_hang).
struct PendingHang {
  std::chrono::steady_clock::time_point decide_at;
  RootCause cause;                   // the most suspect report so far, or the notice
  std::vector<StalledNode> stalled;  // every reporting node's stalled ranks
  HangSuspicion suspicion;           // the cause's
  bool noticed_only = true;          // a HANGING notice, no report yet: `cause` says so
};

class Job {
 public:
  using Clock = std::chrono::steady_clock;

  // `plan`: node 0's; `setup_error`: node 0 cannot run the step (the
  // verdict, once every node has arrived).
  explicit Job(NodePlan plan, std::string setup_error = "");

  // The one way in: the event, at `now`; what node 0 is to do, in order.
  std::vector<Action> on(const Event& event, Clock::time_point now);

  Phase phase() const { return phase_; }
  std::uint32_t attempt() const { return attempt_; }
  const NodePlan& plan() const { return plan_; }
  const std::optional<Verdict>& verdict() const { return verdict_; }
  // The nodes taken out of the run, by Slurm's name, and why.
  const std::vector<BadNode>& bad_nodes() const { return bad_nodes_; }
  std::size_t size() const { return nodes_.size(); }
  const Node& node(std::uint32_t n) const { return nodes_[n]; }
  // Who runs which group, from the moment every node has joined.
  const std::optional<Roster>& roster() const { return roster_; }
  // Why a connection that proved the step's secret for `node` may not join, if so.
  std::optional<std::string> refusal(std::uint32_t node) const;
  std::string node_name(std::uint32_t node) const;  // "2 (n2, 10.0.0.2)"
  std::vector<std::string> hosts() const;           // by node
  std::size_t running_nodes() const;                // whose workers run now (cheap: no names)
  // The nodes whose workers run now, with their first rank (straggler.hpp).
  std::vector<NodeSeat> seats() const;

 private:
  // One handler per event (job.cpp).
  void on_event(const Joined& e);
  void on_event(const Failed& e);
  void on_event(const HangNoticed& e);
  void on_event(const Stopped& e);
  void on_event(const Finished& e);
  void on_event(const Signalled& e);
  void on_event(const Disconnected& e);
  void on_event(const Silent& e);
  void on_event(const OtherRelease& e);
  void on_event(const RendezvousTimedOut& e);
  void on_event(const CannotStart& e);
  void on_event(const StragglerNamed& e);
  void on_event(const PreflightDone& e);
  void on_event(const Tick& e);

  void all_joined();
  void start_attempt();
  void set_cause(RootCause cause);
  void begin_stop(RootCause cause);
  void after_stop();  // the restart rule
  void take_out(std::uint32_t node, const std::string& why);
  void lose(std::uint32_t node, const std::string& why, bool taken_out);
  void blame(std::uint32_t node, const std::string& why);
  std::optional<std::uint32_t> next_blamed_twice();
  std::vector<std::uint32_t> absent_from_next_attempt() const;
  void note_hang(std::uint32_t node, const Failure& failure);
  void decide_hang();
  void finish(std::optional<RootCause> cause);
  void finish_setup(std::string why);
  RootCause root_cause(Failure failure) const;
  Failure node_failure(std::uint32_t node, FailureKind kind, std::string detail) const;
  bool runs_workers(std::uint32_t node) const;
  template <typename Done>
  bool all_settled(Done done);
  void act(Action action) { actions_.push_back(std::move(action)); }

  NodePlan plan_;
  std::string setup_error_;
  std::vector<Node> nodes_;
  std::size_t joined_ = 0;  // counted, not scanned per JOIN (16,384 nodes)
  Phase phase_ = Phase::Rendezvous;
  std::uint32_t attempt_ = 0;
  std::optional<RootCause> cause_;  // why this attempt is being stopped
  bool no_restart_ = false;         // a cause of this attempt's class is never restarted
  std::optional<Verdict> verdict_;
  std::optional<PendingHang> hang_;
  BlameBook blames_;
  std::vector<std::uint32_t> blamed_twice_;  // to be taken out before the next attempt
  std::vector<BadNode> bad_nodes_;
  std::optional<Roster> roster_;
  std::vector<bool> running_;  // which nodes run workers in this attempt
  std::size_t settled_ = 0;    // all_settled(): the nodes before it are done in this attempt
  bool can_go_on_ = true;      // false once a loss or Slurm's stop leaves the run unable to restart
  bool roster_changed_ = false;
  std::vector<std::string> changes_;
  Clock::time_point now_;
  std::vector<Action> actions_;  // on()'s answer, as it is made
};

}  // namespace job
}  // namespace ddp::agent
