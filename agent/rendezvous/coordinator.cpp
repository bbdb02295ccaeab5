#include "rendezvous/coordinator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "ddp/base/parse.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"

namespace ddp::agent {

namespace {

// How long hang reports are compared, from the first, before the most
// suspect is the root cause: a node's check runs every 250 ms, and its
// stalled workers get up to 3 s to die of SIGABRT.
constexpr auto kHangSettle = std::chrono::seconds(4);
// From a node's first notice of a hang (HANGING) to its report: its stalled
// workers get 3 s to print their stacks and die.
constexpr auto kHangNoticeWait = std::chrono::seconds(8);

}  // namespace

Failure without_output(Failure f) {
  f.stderr_tail.clear();
  f.error_file.clear();
  return f;
}

HangSuspicion suspicion_of(const HangFacts& hang) {
  // A rank that never signalled is behind every rank that did: step 0.
  return {std::uint64_t(hang.where), hang.never ? 0 : hang.step.value_or(~0ull), hang.since_ms};
}

Coordinator::Coordinator(EventLoop& loop, CoordinatorConfig config)
    : loop_(loop),
      config_(std::move(config)),
      gate_(loop,
            GateConfig{config_.run_id, config_.secret, config_.nnodes, config_.handshake_timeout, config_.max_pending},
            gate_events()),
      nodes_(config_.nnodes),
      stragglers_(config_.verbose),
      started_(Clock::now()),
      next_heartbeat_scan_(Clock::now()) {}

Status Coordinator::listen(const std::vector<std::uint16_t>& candidates, PortRange range) {
  std::vector<PortRefusal> refusals;
  for (const auto port : candidates) {
    PortClaim claim;
    if (port != 0) {
      auto outcome = claim_port(port, std::nullopt);
      if (auto* refused = std::get_if<PortRefusal>(&outcome)) {
        refusals.push_back(*refused);
        continue;
      }
      claim = std::move(std::get<PortClaim>(outcome));
    }
    auto listening = gate_.listen(port);
    if (!listening) return fail(listening.error());
    if (*listening) {
      rdzv_claim_ = std::move(claim);
      return Ok{};
    }
    refusals.push_back({port, PortRefusal::Holder::OtherProcess, tcp_port_holder(port)});
  }
  return fail(no_free_port("the rendezvous port", range, refusals, kernel_ephemeral_ports()));
}

RdzvGate::Events Coordinator::gate_events() {
  return {[this](std::uint32_t node) { return admit(node); },
          [this](std::uint32_t node, std::uint64_t peer) {
            nodes_[node].peer = peer;
            nodes_[node].last_seen = Clock::now();
          },
          [this](std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) { on_message(node, peer, m); },
          [this](std::uint32_t node, std::uint64_t peer, const std::string& why) { on_close(node, peer, why); },
          [this](std::uint32_t node, const std::string& why) { on_mismatch(node, why); }};
}

// A connection proved the step's secret for `node`: why it may not join, if so.
std::optional<std::string> Coordinator::admit(std::uint32_t node) const {
  const Node& n = nodes_[node];
  if (!n.joined && !n.lost) return std::nullopt;
  // It knows the secret: a misconfiguration (two agents for one node), not a
  // stranger; or a lost node back (a link restored, a SIGSTOP'd agent resumed):
  // its place was given away, and it is never used again in this step.
  return n.lost ? "node " + std::to_string(node) + " was lost and is not used again in this step"
                : "node " + std::to_string(node) + " has already joined";
}

// A node of this step runs another release (a rolling upgrade caught it
// half-way): nothing can run until every node runs the same.
void Coordinator::on_mismatch(std::uint32_t, const std::string& why) {
  if (phase_ == Phase::Rendezvous) finish_setup(why);
}

// An authenticated agent's message. One this release's agents never send
// (malformed, or of the other direction) ends its connection, so the node is
// lost at once with the reason, instead of missing at some deadline.
void Coordinator::on_message(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) {
  nodes_[node].last_seen = Clock::now();
  auto report = rdzv::decode_report(m);
  if (!report) return gate_.close_peer(peer, "it sent a malformed message: " + report.error());
  if (const auto* join = std::get_if<rdzv::Join>(&*report)) return on_join(node, *join);
  if (const auto* failed = std::get_if<rdzv::Fail>(&*report)) return on_fail(node, failed->failure);
  if (const auto* hanging = std::get_if<rdzv::Hanging>(&*report)) return on_hanging(node, *hanging);
  if (const auto* load = std::get_if<rdzv::Load>(&*report)) return stragglers_.on_load(node, *load);
  if (const auto* stopped = std::get_if<rdzv::Stopped>(&*report)) return on_stopped(node, *stopped);
  if (const auto* finished = std::get_if<rdzv::Finished>(&*report)) return on_finished(node, peer, *finished);
  if (const auto* checked = std::get_if<rdzv::Checked>(&*report)) return on_checked(node, *checked);
  if (const auto* signalled = std::get_if<rdzv::Signalled>(&*report)) return on_signalled(node, *signalled);
}

void Coordinator::on_join(std::uint32_t node, const rdzv::Join& join) {
  Node& n = nodes_[node];
  if (n.joined || phase_ != Phase::Rendezvous) return;
  n.joined = true;
  n.nproc = join.nproc;
  n.host = join.host;
  n.addr = join.addr;
  n.slurm_node = join.slurm_node;
  n.check_port = join.check_port;
  n.workers = join.workers;
  if (++joined_ == nodes_.size()) all_joined();
}

void Coordinator::all_joined() {
  if (!config_.setup_error.empty()) return finish_setup(config_.setup_error);
  std::vector<std::uint32_t> capacity;
  for (const auto& n : nodes_) capacity.push_back(n.nproc);
  auto roster = make_roster(std::move(capacity), config_.spares);
  if (!roster) return finish_setup(roster.error());
  roster_ = std::move(roster).value();
  roster_changed_ = true;
  if (config_.preflight != PreflightAction::Off) return begin_preflight();
  phase_ = Phase::Running;
  start_attempt();
}

bool Coordinator::runs_workers(std::uint32_t node) const {
  return node < running_.size() && running_[node] && !nodes_[node].lost;
}

// Whether every node of this attempt's groups is `done` (or lost). Within an
// attempt a node once done stays done (finished, stopped, lost: none is
// undone), so the nodes before settled_ are never looked at again: each
// FINISHED or STOPPED costs O(1) amortized, not a walk over 16,384 nodes.
bool Coordinator::all_settled(const std::function<bool(const Node&)>& done) {
  while (settled_ < nodes_.size() && (!runs_workers(settled_) || done(nodes_[settled_]))) ++settled_;
  return settled_ == nodes_.size();
}

void Coordinator::start_attempt() {
  rdzv::Start start;
  start.attempt = attempt_;
  for (const auto& g : roster_->groups) {
    start.group_nodes.push_back(g.node);
    start.group_workers.push_back(g.workers);
  }
  running_.assign(nodes_.size(), false);
  for (const auto node : start.group_nodes) running_[node] = true;
  settled_ = 0;
  for (auto& n : nodes_) {
    n.finished = false;
    n.stopped_attempt.reset();
    n.failure.reset();
  }
  cause_.reset();
  phase_ = Phase::Running;
  stragglers_.begin_attempt(attempt_);
  // The earlier attempt's port goes back first: its workers are stopped, and
  // with --ddp-port it is this attempt's too.
  master_claim_ = PortClaim{};
  auto claim = config_.claim_master_port(attempt_);
  if (!claim) return finish_setup(claim.error());
  master_claim_ = std::move(claim).value();
  if (config_.verbose && roster_changed_) print_summary();
  roster_changed_ = false;
  start.master_addr = config_.master_addr;
  start.master_port = master_claim_.port();
  const auto message = start.to_message();
  if (rdzv::encode(message).empty())  // the lists travel in runs: only a step of many thousand odd nodes
    return finish_setup("the step's layout (" + std::to_string(start.group_nodes.size()) +
                        " nodes) does not fit one rendezvous message; run fewer nodes per step");
  broadcast(message);
}

// A worker failure on `node`. The first of an attempt is its root cause,
// unless a hang is being reported: then only hang reports compete.
void Coordinator::on_fail(std::uint32_t node, Failure failure) {
  if (failure.attempt != attempt_) return;  // a stale report from an earlier attempt
  Node& n = nodes_[node];
  failure.node = node;  // who it is, as authenticated and joined
  failure.host = n.host;
  failure.addr = n.addr;
  if (!n.failure) n.failure = failure;  // its HealthCheck's trigger
  if (phase_ != Phase::Running) return;  // not the first: not the root cause
  n.failed_attempt = attempt_;
  if (failure.hang) return note_hang(node, failure);
  if (hang_) return decide_hang();  // its consequence, not a cause; the hang's own reports decide
  const FailureClass cls = class_of(failure);
  if (policy_of(cls).blame_node) blame(node, std::string(class_name(cls)) + " in attempt " + std::to_string(attempt_));
  begin_stop(root_cause(std::move(failure)));
}

// A failure that was the node's own fault; the second keeps it out of the
// job's next attempts (blame.hpp).
void Coordinator::blame(std::uint32_t node, const std::string& why) {
  if (!blames_.blame(node, why)) return;
  spdlog::warn("node {} is blamed twice ({}): it is kept out of the job's next attempts", node_name(node),
               blames_.reasons(node));
  kept_out_.push_back(node);
}

// A node blamed twice that is still in the step, once: it goes before a restart.
std::optional<std::uint32_t> Coordinator::take_kept_out() {
  while (!kept_out_.empty()) {
    const auto node = kept_out_.front();
    kept_out_.erase(kept_out_.begin());
    if (!nodes_[node].lost) return node;
  }
  return std::nullopt;
}

// A node's hang watch fired: its report follows once its stalled workers
// have printed their stacks (3 s at most). Meanwhile the ranks it aborts make
// their peers fail elsewhere: those failures are the hang's consequences,
// not its cause, so from now on only hang reports compete.
void Coordinator::on_hanging(std::uint32_t node, const rdzv::Hanging& hanging) {
  if (hanging.attempt != attempt_ || phase_ != Phase::Running || hang_) return;
  Failure unreported = node_failure(node, FailureKind::HangUnreported,
                                    "sent no report within " + seconds_text(kHangNoticeWait));
  hang_.emplace();
  hang_->decide_at = Clock::now() + kHangNoticeWait;
  hang_->cause = root_cause(std::move(unreported));
  hang_->noticed_only = true;
}

// A hang report (--ddp-hang-timeout): every node whose ranks stalled reports
// within a moment of the others (its own check, or its workers failing once
// the first node stopped its stalled ones). Each names its own suspect
// (hang_watch.hpp); wait for the other nodes' reports, up to kHangSettle, and
// keep the most suspect (HangSuspicion: outside a collective first, then the
// step it reached, then silent longest).
void Coordinator::note_hang(std::uint32_t node, const Failure& failure) {
  if (!hang_) hang_.emplace();
  if (hang_->noticed_only) hang_->decide_at = Clock::now() + kHangSettle;  // from the first report
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
void Coordinator::decide_hang() {
  if (!hang_ || phase_ != Phase::Running) return;
  bool all_in = !hang_->noticed_only;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    all_in &= !runs_workers(i) || nodes_[i].finished || nodes_[i].failed_attempt == attempt_;
  if (!all_in && Clock::now() < hang_->decide_at) return;
  RootCause cause = std::move(hang_->cause);
  for (const auto& stalled : hang_->stalled)
    if (stalled.node != cause.failure.node) cause.also_stalled.push_back(stalled);
  hang_.reset();
  begin_stop(std::move(cause));
}

void Coordinator::on_stopped(std::uint32_t node, const rdzv::Stopped& stopped) {
  if (stopped.attempt != attempt_) return;  // a stale report from an earlier attempt
  nodes_[node].stopped_attempt = attempt_;
  if (!stopped.unhealthy.empty()) return node_lost(node, stopped.unhealthy, true);
  if (phase_ == Phase::Stopping) check_stopped();
}

void Coordinator::on_finished(std::uint32_t node, std::uint64_t peer, const rdzv::Finished& finished) {
  if (finished.attempt != attempt_) return;
  nodes_[node].finished = true;
  if (phase_ == Phase::Stopping) return check_stopped();
  if (phase_ != Phase::Running) return;
  if (!all_settled([](const Node& n) { return n.finished; })) {
    // This node is done; it may leave now (no exit barrier). Node 0's
    // agent stays: it hosts this coordinator until the verdict.
    if (node != 0) gate_.send(peer, rdzv::Bye{}.to_message());
    return;
  }
  finish(std::nullopt);
}

Failure Coordinator::node_failure(std::uint32_t node, FailureKind kind, std::string detail) const {
  Failure f;
  f.kind = kind;
  f.attempt = attempt_;
  f.at_rendezvous = phase_ == Phase::Rendezvous;
  f.node = node;
  f.host = nodes_[node].host;
  f.addr = nodes_[node].addr;
  f.detail = std::move(detail);
  return f;
}

void Coordinator::begin_stop(RootCause cause) {
  hang_.reset();
  cause_ = std::move(cause);
  phase_ = Phase::Stopping;
  broadcast(rdzv::Stop{attempt_}.to_message());
  check_stopped();
}

// The restart rule, once every node that ran workers in this attempt has
// stopped them (or finished, or was lost): the next attempt when every node
// it needs is there and a restart is left; else the verdict.
void Coordinator::check_stopped() {
  if (!all_settled([this](const Node& n) { return n.finished || n.stopped_attempt == attempt_; }))
    return;  // still stopping
  if (can_go_on_ && attempt_ < config_.max_restarts)
    if (const auto out = take_kept_out())  // its place goes to a spare, or the run shrinks or stops
      return node_lost(*out, "blamed twice (" + blames_.reasons(*out) + "), kept out of the next attempts", true);
  const auto absent = absent_from_next_attempt();
  const bool all_present = can_go_on_ && absent.empty();
  const bool restart_left = attempt_ < config_.max_restarts;
  if (all_present && restart_left) {
    spdlog::warn("restarting every worker on every node (attempt {} of {}) after: {}", attempt_ + 2,
                 config_.max_restarts + 1, describe(*cause_));
    ++attempt_;
    return start_attempt();
  }
  RootCause cause = std::move(*cause_);
  if (all_present && roster_changed_) cause.restarts_exhausted = config_.max_restarts;
  if (can_go_on_ && restart_left)
    for (const auto node : absent)
      if (!nodes_[node].lost) cause.left.push_back(node_name(node));
  finish(std::move(cause));
}

// The nodes of the next attempt that cannot run it: lost, or finished and
// gone (no exit barrier holds a node whose workers are done).
std::vector<std::uint32_t> Coordinator::absent_from_next_attempt() const {
  std::vector<std::uint32_t> absent;
  for (const auto& g : roster_->groups)
    if (nodes_[g.node].lost || !gate_.connected(nodes_[g.node].peer)) absent.push_back(g.node);
  return absent;
}

RootCause Coordinator::root_cause(Failure failure) const {
  RootCause cause;
  cause.failure = std::move(failure);
  cause.attempts = config_.max_restarts + 1;
  return cause;
}

// Node 0 cannot run the step (or go on with it): `why` says what and the fix.
void Coordinator::finish_setup(std::string why) {
  Failure f = node_failure(0, FailureKind::Setup, std::move(why));
  f.host.clear();
  f.addr.clear();
  finish(root_cause(std::move(f)));
}

void Coordinator::finish(std::optional<RootCause> cause) {
  if (verdict_) return;
  if (!cause)  // a run that survived lost nodes says which, once
    for (const auto& change : changes_) spdlog::warn("the run went on after: {}", change);
  verdict_ = Verdict{std::move(cause)};
  phase_ = Phase::Done;
  broadcast(rdzv::Done{*verdict_}.to_message());
}

std::string Coordinator::node_name(std::uint32_t node) const {
  return ddp::node_name(node, nodes_[node].host, nodes_[node].addr);
}

void Coordinator::broadcast(const rdzv::Message& m) { gate_.broadcast(m); }

void Coordinator::tick() {
  gate_.tick();
  if (phase_ == Phase::Done) return;
  decide_hang();
  tick_deadlines(Clock::now());
  if (phase_ == Phase::Running) tick_stragglers(Clock::now());
  if (phase_ == Phase::Preflight) tick_preflight(Clock::now());
}

// --ddp-stragglers=swap: a node named a straggler is taken out like an
// unhealthy one (a spare takes its group, or the run shrinks or stops).
void Coordinator::tick_stragglers(Clock::time_point now) {
  // Every 100 ms (windows are seconds long), not every loop turn, which at
  // 16,384 nodes comes with nearly every message: this scan was 5% of node 0's
  // CPU in bench/scale_light.py.
  if (now < next_straggler_look_) return;
  next_straggler_look_ = now + std::chrono::milliseconds(100);
  std::size_t running = 0;  // counted, not named, until a window is complete
  for (const auto& g : roster_->groups) running += !nodes_[g.node].finished && !nodes_[g.node].lost;
  if (stragglers_.windows_in() < running) return;
  for (const auto& v : stragglers_.tick(seats())) {
    if (config_.stragglers == StragglerAction::Swap && phase_ == Phase::Running)
      node_lost(v.seat.node, "a straggler (--ddp-stragglers=swap) " + straggler_figures(v), true);
    else
      blame(v.seat.node, "a straggler in attempt " + std::to_string(v.attempt));
  }
}

// The nodes whose workers run now, with their first rank (straggler.hpp).
std::vector<NodeSeat> Coordinator::seats() const {
  std::vector<NodeSeat> seats;
  std::uint32_t base = 0;
  for (const auto& g : roster_->groups) {
    const Node& n = nodes_[g.node];
    if (!n.finished && !n.lost) seats.push_back({g.node, base, node_name(g.node), n.host});
    base += g.workers;
  }
  return seats;
}

// The rendezvous timeout, heartbeats both ways.
void Coordinator::tick_deadlines(Clock::time_point now) {
  if (phase_ == Phase::Rendezvous && now - started_ > config_.rdzv_timeout) return rendezvous_timed_out();
  // Each node's heartbeat falls due an interval after the last message it
  // was sent; looked for four times an interval, so one is at most a quarter
  // of an interval late (the timeout is three intervals at least).
  if (now >= next_heartbeat_scan_) {
    next_heartbeat_scan_ = now + config_.heartbeat_every / 4;
    gate_.heartbeat(rdzv::Heartbeat{}.to_message(), config_.heartbeat_every);
  }
  // Silent nodes: looked for every 100 ms (the timeout is seconds), not every
  // loop turn, which at 16,384 nodes comes with nearly every message.
  if (now < next_silence_scan_) return;
  next_silence_scan_ = now + std::chrono::milliseconds(100);
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.joined && !n.lost && !n.finished && now - n.last_seen > config_.heartbeat_timeout)
      node_lost(i, "no heartbeat for " + std::to_string(config_.heartbeat_timeout.count() / 1000) +
                       " s (node down or network cut?)");
  }
}

}  // namespace ddp::agent
