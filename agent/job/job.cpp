#include "job/job.hpp"

#include <algorithm>
#include <utility>

#include "ddp/base/parse.hpp"
#include "job/failure_text.hpp"

namespace ddp::agent {

// ---- what happens after a failure ------------------------------------------

// The failure classes (ddp/wire/failure_class.hpp: the node that saw the
// failure classes it) and what each means for the run. Slurm's stop and a
// step that could not begin (workers that cannot be started, a command that
// cannot be executed, a bad config) are never restarted: the next attempt
// would meet the same. A CUDA or NCCL error, a lost node and a node taken
// out count against their node.
ClassPolicy policy_of(FailureClass cls) {
  switch (cls) {
    case FailureClass::Exception: return {true, false, "the script's own exception (a Python traceback)"};
    case FailureClass::Exit: return {true, false, "a non-zero exit without a Python traceback"};
    case FailureClass::HostOom:
      return {true, false, "out of host memory (the kernel's OOM killer: its cgroup's oom_kill count rose)"};
    case FailureClass::GpuOom: return {true, false, "out of GPU memory"};
    case FailureClass::CudaNccl: return {true, true, "a CUDA or NCCL error (a GPU, its memory or a link may be bad)"};
    case FailureClass::Crash: return {true, false, "a crash (a fatal signal from the process itself)"};
    case FailureClass::Killed: return {true, false, "killed from outside (a signal not of its own making)"};
    case FailureClass::Hang: return {true, false, "a hang"};
    case FailureClass::NodeLost: return {true, true, "a lost node"};
    case FailureClass::NodeUnhealthy:
      return {true, true, "a node taken out (the site's HealthCheck failed, a straggler swapped, or blamed twice)"};
    case FailureClass::SlurmStop: return {false, false, "Slurm ended the job or step"};
    case FailureClass::Setup: return {false, false, "the step could not begin"};
  }
  return {};
}

std::string class_line(FailureClass cls) {
  const ClassPolicy p = policy_of(cls);
  return std::string("class ") + class_name(cls) + ": " + p.words + "; " +
         (p.restart ? "--ddp-restarts applies" : "no restart") + "; " +
         (p.blame_node ? "the node's fault" : "not the node's fault");
}

namespace job {

// The restart rule, once every node that ran workers in this attempt has
// stopped them (or finished, or was lost). A node blamed twice goes first
// (a spare takes its place, or the run shrinks or ends); then the next
// attempt, when the class of every cause this attempt had allows a restart,
// one is left, and every node it needs is still there; else the verdict,
// saying why not.
void Job::after_stop() {
  if (!all_settled([this](const Node& n) { return n.finished || n.stopped_attempt == attempt_; })) return;
  const bool class_restarts = !no_restart_;
  const bool restart_left = attempt_ < plan_.max_restarts;
  const bool may_restart = can_go_on_ && class_restarts && restart_left;
  if (may_restart)
    if (const auto out = next_blamed_twice())
      return take_out(*out, "blamed twice (" + blames_.reasons(*out) + "), taken out of the next attempts");
  const auto absent = absent_from_next_attempt();
  if (may_restart && absent.empty()) {
    act(Say{"restarting every worker on every node (attempt " + std::to_string(attempt_ + 2) + " of " +
            std::to_string(plan_.max_restarts + 1) + ") after: " + describe(*cause_)});
    ++attempt_;
    return start_attempt();
  }
  RootCause cause = std::move(*cause_);
  if (can_go_on_ && class_restarts && absent.empty() && roster_changed_) cause.restarts_exhausted = plan_.max_restarts;
  if (may_restart)
    for (const auto node : absent)
      if (!nodes_[node].lost) cause.left.push_back(node_name(node));
  finish(std::move(cause));
}

namespace {

// How long hang reports are compared, from the first, before the most
// suspect is the root cause: a node's check runs every 250 ms, and its
// stalled workers get up to 3 s to die of SIGABRT.
constexpr auto kHangSettle = std::chrono::seconds(4);
// From a node's first notice of a hang (HANGING) to its report: its stalled
// workers get 3 s to print their stacks and die.
constexpr auto kHangNoticeWait = std::chrono::seconds(8);

// A failure as a related one: its first line is all the root cause shows.
Failure without_output(Failure f) {
  f.stderr_tail.clear();
  f.error_file.clear();
  return f;
}

// What Slurm's stop does to a step before every agent hears of it: its
// workers killed from outside (proctrack signals every process of the
// step), its nodes' connections ended.
bool stopped_by_signal(const Failure& f) {
  const FailureClass cls = class_of(f);
  return cls == FailureClass::NodeLost || cls == FailureClass::Killed;
}

}  // namespace

HangSuspicion suspicion_of(const HangFacts& hang) {
  // A rank that never signalled is behind every rank that did: step 0.
  return {std::uint64_t(hang.where), hang.never ? 0 : hang.step.value_or(~0ull), hang.since_ms};
}

Job::Job(NodePlan plan, std::string setup_error)
    : plan_(std::move(plan)), setup_error_(std::move(setup_error)), nodes_(plan_.nnodes) {}

std::vector<Action> Job::on(const Event& event, Clock::time_point now) {
  now_ = now;
  if (phase_ != Phase::Done) std::visit([this](const auto& e) { on_event(e); }, event);  // the verdict is final
  return std::exchange(actions_, {});
}

// ---- the rendezvous --------------------------------------------------------

void Job::on_event(const Joined& e) {
  Node& n = nodes_[e.node];
  if (n.join || phase_ != Phase::Rendezvous) return;
  n.join = e.join;
  if (++joined_ == nodes_.size()) all_joined();
}

void Job::all_joined() {
  if (!setup_error_.empty()) return finish_setup(setup_error_);
  std::vector<std::uint32_t> capacity;
  for (const auto& n : nodes_) capacity.push_back(n.join->nproc);
  auto roster = make_roster(std::move(capacity), plan_.spares);
  if (!roster) return finish_setup(roster.error());
  roster_ = std::move(roster).value();
  roster_changed_ = true;
  if (plan_.preflight != PreflightAction::Off) {
    phase_ = Phase::Preflight;
    return act(BeginPreflight{});
  }
  start_attempt();
}

void Job::on_event(const OtherRelease& e) {
  if (phase_ == Phase::Rendezvous) finish_setup(e.why);
}

// The cause travels in one DONE line (16 KiB at most): name the missing
// nodes (the first 50 in full), count the ones that arrived.
void Job::on_event(const RendezvousTimedOut& e) {
  if (phase_ != Phase::Rendezvous) return;
  std::string missing;
  std::size_t missing_count = 0;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (!nodes_[i].join && ++missing_count <= 50) missing += ", " + node_name(i);
  if (missing_count > 50) missing += " and " + std::to_string(missing_count - 50) + " more";
  finish_setup("rendezvous timed out after " + std::to_string(e.after.count() / 1000) + " s: " +
               std::to_string(missing_count) + " node(s) did not arrive: " + missing.substr(2) + " (" +
               std::to_string(joined_) + " of " + std::to_string(nodes_.size()) +
               " arrived); each missing node's agent says what it tried");
}

// check: a node named is blamed (named again later, it is taken out); swap:
// taken out now, so that a spare takes its group before any worker starts.
void Job::on_event(const PreflightDone& e) {
  if (phase_ != Phase::Preflight) return;
  std::vector<std::uint32_t> done;
  for (const auto& v : e.named) {
    if (std::find(done.begin(), done.end(), v.node) != done.end()) continue;
    done.push_back(v.node);
    const std::string how = v.result.rate ? "slow in the pre-flight" : "failed the pre-flight";
    if (plan_.preflight == PreflightAction::Swap)
      take_out(v.node, how + " (--ddp-preflight=swap): " + preflight_figures(v));
    else
      blame(v.node, how + " (" + measure_name(v.measure) + ")");
    if (phase_ != Phase::Preflight) return;  // the job ended (node 0 named, or no spare left)
  }
  start_attempt();
}

// ---- attempts ---------------------------------------------------------------

void Job::start_attempt() {
  running_.assign(nodes_.size(), false);
  for (const auto& g : roster_->groups) running_[g.node] = true;
  settled_ = 0;
  for (auto& n : nodes_) {
    n.finished = false;
    n.stopped_attempt.reset();
    n.failure.reset();
  }
  cause_.reset();
  no_restart_ = false;
  phase_ = Phase::Running;
  act(Start{attempt_, std::exchange(roster_changed_, false)});
}

// A worker failure on `node`. The first of an attempt is its root cause,
// unless a hang is being reported: then only hang reports compete.
void Job::on_event(const Failed& e) {
  Failure failure = e.failure;
  if (failure.attempt != attempt_) return;  // a stale report from an earlier attempt
  Node& n = nodes_[e.node];
  failure.node = e.node;  // who it is, as authenticated and joined
  failure.host = n.join ? n.join->host : "";
  failure.addr = n.join ? n.join->addr : "";
  if (!n.failure) n.failure = failure;   // its HealthCheck's trigger
  if (phase_ != Phase::Running) return;  // not the first: not the root cause
  n.failed_attempt = attempt_;
  if (failure.hang) return note_hang(e.node, failure);
  if (hang_) return decide_hang();  // its consequence, not a cause; the hang's own reports decide
  const FailureClass cls = class_of(failure);
  if (policy_of(cls).blame_node) blame(e.node, std::string(class_name(cls)) + " in attempt " + std::to_string(attempt_));
  begin_stop(root_cause(std::move(failure)));
}

void Job::on_event(const Stopped& e) {
  if (e.attempt != attempt_) return;  // a stale report from an earlier attempt
  nodes_[e.node].stopped_attempt = attempt_;
  if (!e.unhealthy.empty()) return take_out(e.node, e.unhealthy);
  if (phase_ == Phase::Stopping) after_stop();
}

void Job::on_event(const Finished& e) {
  if (e.attempt != attempt_) return;
  nodes_[e.node].finished = true;
  if (phase_ == Phase::Stopping) return after_stop();
  if (phase_ != Phase::Running) return;
  if (all_settled([](const Node& n) { return n.finished; })) return finish(std::nullopt);
  // This node is done; it may leave now (no exit barrier). Node 0's agent
  // stays: it hosts the coordinator until the verdict.
  if (e.node != 0) act(Release{e.node});
}

void Job::on_event(const CannotStart& e) { finish_setup(e.why); }

// The attempt's cause (or a later one that explains it better, a loss or
// Slurm's stop); a class that is never restarted marks the attempt for good.
void Job::set_cause(RootCause cause) {
  no_restart_ |= !policy_of(class_of(cause.failure)).restart;
  cause_ = std::move(cause);
}

void Job::begin_stop(RootCause cause) {
  hang_.reset();
  set_cause(std::move(cause));
  phase_ = Phase::Stopping;
  act(Stop{attempt_});
  after_stop();
}

// The nodes of the next attempt that cannot run it: lost, or finished and
// gone (no exit barrier holds a node whose workers are done).
std::vector<std::uint32_t> Job::absent_from_next_attempt() const {
  std::vector<std::uint32_t> absent;
  for (const auto& g : roster_->groups)
    if (nodes_[g.node].lost || nodes_[g.node].left) absent.push_back(g.node);
  return absent;
}

bool Job::runs_workers(std::uint32_t node) const {
  return node < running_.size() && running_[node] && !nodes_[node].lost;
}

// Whether every node of this attempt's groups is `done` (or lost). Within an
// attempt a node once done stays done (finished, stopped, lost: none is
// undone), so the nodes before settled_ are never looked at again: each
// FINISHED or STOPPED costs O(1) amortized, not a walk over 16,384 nodes.
template <typename Done>
bool Job::all_settled(Done done) {
  while (settled_ < nodes_.size() && (!runs_workers(std::uint32_t(settled_)) || done(nodes_[settled_]))) ++settled_;
  return settled_ == nodes_.size();
}

// ---- hangs ------------------------------------------------------------------

// A node's hang watch fired: its report follows once its stalled workers
// have printed their stacks. Meanwhile the ranks it aborts make their peers
// fail elsewhere: those failures are the hang's consequences, not its cause,
// so from now on only hang reports compete.
void Job::on_event(const HangNoticed& e) {
  if (e.attempt != attempt_ || phase_ != Phase::Running || hang_) return;
  Failure unreported =
      node_failure(e.node, FailureKind::HangUnreported, "sent no report within " + seconds_text(kHangNoticeWait));
  hang_.emplace();
  hang_->decide_at = now_ + kHangNoticeWait;
  hang_->cause = root_cause(std::move(unreported));
  hang_->noticed_only = true;
}

// A hang report: every node whose ranks stalled reports within a moment of
// the others, each naming its own suspect (node/duties/hang_rule.hpp). Wait
// for the other nodes' reports, up to kHangSettle, and keep the most suspect.
void Job::note_hang(std::uint32_t node, const Failure& failure) {
  if (!hang_) hang_.emplace();
  if (hang_->noticed_only) hang_->decide_at = now_ + kHangSettle;  // from the first report
  // The other nodes' stalled ranks wait for the culprit: in rank order.
  auto ranks = failure.hang->stalled;
  std::sort(ranks.begin(), ranks.end());
  hang_->stalled.push_back({node, std::move(ranks)});
  const auto suspicion = suspicion_of(*failure.hang);
  if (hang_->noticed_only || suspicion < hang_->suspicion) {
    hang_->noticed_only = false;
    hang_->cause = root_cause(failure);
    hang_->suspicion = suspicion;
  }
  decide_hang();
}

// Once a hang report is in and every node has reported something, or at the
// deadline. (A node lost meanwhile stops the job itself, as the cause.)
void Job::decide_hang() {
  if (!hang_ || phase_ != Phase::Running) return;
  bool all_in = !hang_->noticed_only;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    all_in &= !runs_workers(i) || nodes_[i].finished || nodes_[i].failed_attempt == attempt_;
  if (!all_in && now_ < hang_->decide_at) return;
  RootCause cause = std::move(hang_->cause);
  for (const auto& stalled : hang_->stalled)
    if (stalled.node != cause.failure.node) cause.also_stalled.push_back(stalled);
  hang_.reset();
  begin_stop(std::move(cause));
}

void Job::on_event(const Tick&) { decide_hang(); }

// ---- a node's end -----------------------------------------------------------

void Job::on_event(const Disconnected& e) {
  Node& n = nodes_[e.node];
  // Through the handshake but not joined (its agent gave the port up just as
  // node 0 let it in): nothing of it is in the job yet; it comes back.
  if (!n.join && !n.lost) return;
  if (n.finished) {
    n.left = true;
    return;
  }
  if (!n.signalled) return lose(e.node, "its agent's connection ended (" + e.why + ")", false);
  // Slurm's stop reached this node first: its workers are stopped, its agent gone.
  n.stopped_attempt = attempt_;
  if (phase_ == Phase::Stopping) after_stop();
}

void Job::on_event(const Silent& e) {
  Node& n = nodes_[e.node];
  if (n.finished) return;
  if (!n.signalled) return lose(e.node, e.why, false);
  // Slurm's stop reached this node first: its silence is that stop, not a loss.
  act(CutOff{e.node, "silent after Slurm's stop"});
  n.stopped_attempt = attempt_;
  if (phase_ == Phase::Stopping) after_stop();
}

// A node's agent got a terminating signal: Slurm is stopping the job or the
// step (scancel, preemption, a time limit, srun interrupted), and every node
// gets one within moments, in no set order. Whichever node hears first, the
// run ends with Slurm's stop (no restart, no blame), and that node's end is
// not a loss. Stopping already, a consequence of the stop (a worker killed by
// a signal, a lost node) gives way to it; any other failure stays the cause.
void Job::on_event(const Signalled& e) {
  Node& n = nodes_[e.node];
  if (n.signalled || n.lost) return;
  n.signalled = e.signal;
  can_go_on_ = false;
  Failure stop = node_failure(e.node, FailureKind::AgentSignalled, "");
  stop.signal = e.signal;
  stop.exit_code = 128 + e.signal;
  if (phase_ == Phase::Rendezvous || phase_ == Phase::Preflight) return finish(root_cause(std::move(stop)));
  if (phase_ == Phase::Running) return begin_stop(root_cause(std::move(stop)));
  if (cause_ && !stopped_by_signal(cause_->failure)) return;
  RootCause cause = root_cause(std::move(stop));
  if (cause_) cause.related = without_output(cause_->failure);
  set_cause(std::move(cause));
}

// --ddp-stragglers=swap: a node named a straggler is taken out (a spare
// takes its group, or the run shrinks or stops); report: blamed.
void Job::on_event(const StragglerNamed& e) {
  const auto& v = e.verdict;
  if (plan_.stragglers == StragglerAction::Swap && phase_ == Phase::Running)
    take_out(v.seat.node, "a straggler (--ddp-stragglers=swap) " + straggler_figures(v));
  else
    blame(v.seat.node, "a straggler in attempt " + std::to_string(v.attempt));
}

void Job::take_out(std::uint32_t node, const std::string& why) { lose(node, why, true); }

// A node stopped answering, or is taken out for cause (`taken_out`: its
// agent still listens). Its place goes to a spare, or its group is dropped
// (--ddp-min-nodes), and every worker restarts; a lost spare only costs a
// spare (roster.hpp). The node is never used again.
void Job::lose(std::uint32_t node, const std::string& why, bool taken_out) {
  Node& n = nodes_[node];
  if (n.lost) return;
  n.lost = true;
  Failure loss = node_failure(node, taken_out ? FailureKind::NodeUnhealthy : FailureKind::NodeLost, why);
  if (taken_out && n.join && !n.join->slurm_node.empty()) bad_nodes_.push_back({n.join->slurm_node, why});
  if (phase_ == Phase::Rendezvous) return finish(root_cause(std::move(loss)));
  // A node taken out is told to leave (its workers are stopped); a lost one is cut off.
  if (!taken_out) act(CutOff{node, "node lost"});
  else if (node != 0) act(Release{node});
  RootCause cause = root_cause(loss);
  // What ran the health check: this node's own first failure of the attempt.
  if (taken_out && n.failure) cause.related = without_output(*n.failure);
  if (node == 0) {  // its agent hosts the coordinator, and MASTER_ADDR is its address
    can_go_on_ = false;
    cause.failure.consequence = "node 0 cannot be replaced (it hosts the rendezvous and MASTER_ADDR)";
  } else {
    const auto change = lose_node(*roster_, node, plan_.min_nodes, [this](std::uint32_t i) { return node_name(i); });
    if (change.kind == RosterChange::Kind::Unused) return act(Say{"rendezvous: " + change.text});  // a spare
    cause.failure.consequence = change.text;
    changes_.push_back(first_line(cause.failure, cause.attempts));
    roster_changed_ = true;
    if (change.kind == RosterChange::Kind::CannotGoOn) can_go_on_ = false;
    // Stopping already: the workers that failed first most likely failed
    // because of this loss (a peer gone mid-collective); the loss is the cause.
    if (!taken_out && cause_) cause.related = without_output(cause_->failure);
  }
  if (phase_ == Phase::Running) return begin_stop(std::move(cause));
  if (phase_ == Phase::Preflight) {  // no worker runs yet: the checks go on without it, or the job ends
    if (!can_go_on_) return finish(std::move(cause));
    return act(Say{"rendezvous: " + changes_.back()});
  }
  set_cause(std::move(cause));
  after_stop();
}

// A failure that was the node's own fault; the second takes it out before
// the job's next attempt (BlameBook).
void Job::blame(std::uint32_t node, const std::string& why) {
  if (!blames_.blame(node, why)) return;
  act(Say{"node " + node_name(node) + " is blamed twice (" + blames_.reasons(node) +
          "): it is taken out before the job's next attempt"});
  blamed_twice_.push_back(node);
}

// A node blamed twice that is still in the step, once.
std::optional<std::uint32_t> Job::next_blamed_twice() {
  while (!blamed_twice_.empty()) {
    const auto node = blamed_twice_.front();
    blamed_twice_.erase(blamed_twice_.begin());
    if (!nodes_[node].lost) return node;
  }
  return std::nullopt;
}

bool BlameBook::blame(std::uint32_t node, std::string why) {
  auto& reasons = book_[node];
  reasons.push_back(std::move(why));
  return reasons.size() == kLimit;
}

std::string BlameBook::reasons(std::uint32_t node) const {
  const auto it = book_.find(node);
  std::string text;
  if (it == book_.end()) return text;
  for (const auto& why : it->second) text += (text.empty() ? "" : "; ") + why;
  return text;
}

// ---- the verdict ------------------------------------------------------------

void Job::finish(std::optional<RootCause> cause) {
  if (verdict_) return;
  if (!cause)  // a run that survived lost nodes says which, once
    for (const auto& change : changes_) act(Say{"the run went on after: " + change});
  verdict_ = Verdict{std::move(cause)};
  phase_ = Phase::Done;
  act(Done{*verdict_});
}

// Node 0 cannot run the step (or go on with it): `why` says what and the fix.
void Job::finish_setup(std::string why) {
  Failure f = node_failure(0, FailureKind::Setup, std::move(why));
  f.host.clear();
  f.addr.clear();
  finish(root_cause(std::move(f)));
}

RootCause Job::root_cause(Failure failure) const {
  RootCause cause;
  cause.failure = std::move(failure);
  cause.attempts = plan_.max_restarts + 1;
  return cause;
}

Failure Job::node_failure(std::uint32_t node, FailureKind kind, std::string detail) const {
  Failure f;
  f.kind = kind;
  f.attempt = attempt_;
  f.at_rendezvous = phase_ == Phase::Rendezvous;
  f.node = node;
  f.host = nodes_[node].join ? nodes_[node].join->host : "";
  f.addr = nodes_[node].join ? nodes_[node].join->addr : "";
  f.detail = std::move(detail);
  return f;
}

// ---- what the coordinator asks ---------------------------------------------

std::optional<std::string> Job::refusal(std::uint32_t node) const {
  const Node& n = nodes_[node];
  if (!n.join && !n.lost) return std::nullopt;
  // It knows the secret: a misconfiguration (two agents for one node), not a
  // stranger; or a lost node back (a link restored, a SIGSTOP'd agent resumed):
  // its place was given away, and it is never used again in this step.
  return n.lost ? "node " + std::to_string(node) + " was lost and is not used again in this step"
                : "node " + std::to_string(node) + " has already joined";
}

std::string Job::node_name(std::uint32_t node) const {
  const Node& n = nodes_[node];
  return n.join ? ddp::agent::node_name(node, n.join->host, n.join->addr) : std::to_string(node);
}

std::vector<std::string> Job::hosts() const {
  std::vector<std::string> hosts;
  for (const auto& n : nodes_) hosts.push_back(n.join ? n.join->host : "");
  return hosts;
}

std::size_t Job::running_nodes() const {
  std::size_t running = 0;
  for (const auto& g : roster_->groups) running += !nodes_[g.node].finished && !nodes_[g.node].lost;
  return running;
}

std::vector<NodeSeat> Job::seats() const {
  std::vector<NodeSeat> seats;
  std::uint32_t base = 0;
  for (const auto& g : roster_->groups) {
    const Node& n = nodes_[g.node];
    if (!n.finished && !n.lost) seats.push_back({g.node, base, node_name(g.node), n.join->host});
    base += g.workers;
  }
  return seats;
}

}  // namespace job
}  // namespace ddp::agent
