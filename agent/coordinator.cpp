#include "coordinator.hpp"

#include <spdlog/spdlog.h>

#include <sstream>

#include "ddp/base/parse.hpp"
#include "ddp/node/netif.hpp"

namespace ddp::agent {

namespace {

constexpr auto kHeartbeatEvery = std::chrono::milliseconds(1000);
// How long hang reports are compared, from the first, before the most
// suspect is the root cause: a node's check runs every 250 ms, and its
// stalled workers get up to 3 s to die of SIGABRT.
constexpr auto kHangSettle = std::chrono::seconds(4);
// From a node's first notice of a hang (HANGING) to its report: its stalled
// workers get 3 s to print their stacks and die.
constexpr auto kHangNoticeWait = std::chrono::seconds(8);

}  // namespace

Coordinator::Coordinator(EventLoop& loop, CoordinatorConfig config)
    : config_(std::move(config)),
      gate_(loop, GateConfig{config_.run_id, config_.secret, config_.nnodes, config_.handshake_timeout,
                              config_.max_pending},
            gate_events()),
      nodes_(config_.nnodes),
      started_(Clock::now()),
      last_heartbeat_(Clock::now()) {}

RdzvGate::Events Coordinator::gate_events() {
  return {[this](std::uint32_t node) { return admit(node); },
          [this](std::uint32_t node, std::uint64_t peer) {
            nodes_[node].peer = peer;
            nodes_[node].last_seen = Clock::now();
          },
          [this](std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) { on_message(node, peer, m); },
          [this](std::uint32_t node, std::uint64_t peer, const std::string& why) { on_close(node, peer, why); }};
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

void Coordinator::on_close(std::uint32_t node, std::uint64_t peer, const std::string& why) {
  if (nodes_[node].peer == peer && !nodes_[node].finished && phase_ != Phase::Done)
    node_lost(node, "its agent's connection ended (" + why + ")");
}

void Coordinator::on_message(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) {
  nodes_[node].last_seen = Clock::now();
  if (m.verb == "HB") return;
  if (m.verb == "JOIN") return handle_join(node, m);
  if (m.verb == "FAIL") return handle_failure(node, m);
  if (m.verb == "HANGING") return handle_hanging(node, m);
  if (m.verb == "STOPPED" || m.verb == "FINISHED") return on_report(node, peer, m);
  spdlog::warn("rendezvous: node {} sent an unknown message {}", node_name(node), m.verb);
}

void Coordinator::on_report(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m) {
  Node& n = nodes_[node];
  const auto attempt = m.get_uint("attempt", 0, 1u << 20);
  if (!attempt || *attempt != attempt_) return;  // a stale report from an earlier attempt
  if (m.verb == "STOPPED")
    n.stopped_attempt = attempt_;
  else
    n.finished = true;
  if (const auto why = m.get("unhealthy"); why && !why->empty() && m.verb == "STOPPED")
    return node_lost(node, *why, true);
  if (phase_ == Phase::Stopping) return check_stopped();
  if (phase_ == Phase::Running && m.verb == "FINISHED") {
    for (std::uint32_t other = 0; other < nodes_.size(); ++other)
      if (runs_workers(other) && !nodes_[other].finished) {
        // This node is done; it may leave now (no exit barrier). Node 0's
        // agent stays: it hosts this coordinator until the verdict.
        if (node != 0) gate_.send(peer, rdzv::Message{"BYE", {}});
        return;
      }
    finish(0, "");
  }
}

void Coordinator::handle_join(std::uint32_t node, const rdzv::Message& m) {
  Node& n = nodes_[node];
  const auto version = m.get_uint("version", 0, 1u << 20);
  const auto nproc = m.get_uint("nproc", 1, 1u << 16);
  if (!version || *version != std::uint64_t(rdzv::kProtocolVersion)) {
    finish(1,
           "node " + std::to_string(node) + " (" + m.get("host").value_or("?") + ") runs a ddp-agent with protocol " +
               m.get("version").value_or("?") + " but node 0 runs protocol " + std::to_string(rdzv::kProtocolVersion) +
               ": install the same slurm-ddp release on every node",
           "ABORT");
    return;
  }
  if (!nproc || n.joined || phase_ != Phase::Rendezvous) return;
  n.joined = true;
  n.nproc = std::uint32_t(*nproc);
  n.host = m.get("host").value_or("?");
  n.addr = m.get("addr").value_or("?");
  auto workers = decode_placements(m.get("workers").value_or(""));
  if (!workers)
    return finish(1,
                  "node " + std::to_string(node) + " (" + printable(n.host, 200) + ") sent placements node 0 cannot read (" +
                      workers.error() + "): install the same slurm-ddp release on every node",
                  "ABORT");
  n.workers = std::move(workers).value();
  for (const auto& other : nodes_)
    if (!other.joined) return;
  all_joined();
}

void Coordinator::all_joined() {
  if (!config_.setup_error.empty()) return finish(1, config_.setup_error, "ABORT");
  std::vector<std::uint32_t> capacity;
  for (const auto& n : nodes_) capacity.push_back(n.nproc);
  auto roster = make_roster(std::move(capacity), config_.spares);
  if (!roster) return finish(1, roster.error(), "ABORT");
  roster_ = std::move(roster).value();
  roster_changed_ = true;
  phase_ = Phase::Running;
  start_attempt();
}

bool Coordinator::runs_workers(std::uint32_t node) const {
  return node < running_.size() && running_[node] && !nodes_[node].lost;
}

// One summary for the whole step, from node 0 (--ddp-verbose): at the start,
// and again when a lost node's group has moved to a spare or been dropped.
void Coordinator::print_summary() const {
  const auto& groups = roster_->groups;
  spdlog::info("step {}: attempt {}: {} node(s), {} worker(s), MASTER_ADDR={} MASTER_PORT={}, rendezvous port {}",
               config_.run_id, attempt_, groups.size(), world_size(*roster_), config_.master_addr,
               config_.master_port(attempt_), gate_.port());
  std::uint64_t rank = 0;
  for (std::uint32_t g = 0; g < groups.size(); ++g) {
    const auto& n = nodes_[groups[g].node];
    const std::uint32_t workers = groups[g].workers;
    spdlog::info("  node {} ({}, {}): group {}, ranks {}-{}", groups[g].node, n.host, n.addr, g, rank,
                 rank + workers - 1);
    for (std::uint32_t local = 0; local < workers; ++local, ++rank)
      spdlog::info("    rank {}: {}", rank,
                   describe_placement(local < n.workers.size() ? n.workers[local] : WorkerPlacement{}));
  }
  for (const auto spare : spare_nodes(*roster_))
    spdlog::info("  node {} ({}, {}): spare", spare, nodes_[spare].host, nodes_[spare].addr);
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].lost) spdlog::info("  node {}: lost, not used again", node_name(i));
}

void Coordinator::start_attempt() {
  std::vector<std::uint32_t> group_nodes, group_workers;
  for (const auto& g : roster_->groups) {
    group_nodes.push_back(g.node);
    group_workers.push_back(g.workers);
  }
  running_.assign(nodes_.size(), false);
  for (const auto node : group_nodes) running_[node] = true;
  for (auto& n : nodes_) {
    n.finished = false;
    n.stopped_attempt.reset();
    n.failure.clear();
  }
  cause_.clear();
  if (config_.verbose && roster_changed_) print_summary();
  roster_changed_ = false;
  phase_ = Phase::Running;
  const std::uint16_t port = config_.master_port(attempt_);
  if (auto free = check_master_port_free(config_.master_addr, port); !free) return finish(1, free.error(), "ABORT");
  rdzv::Message start{"START", {}};
  start.set("attempt", attempt_)
      .set("master_addr", config_.master_addr)
      .set("master_port", port)
      .set("groups", group_nodes)
      .set("counts", group_workers)
      .set("world", world_size(*roster_));
  if (rdzv::encode(start).empty())  // the lists travel in runs: only a step of many thousand odd nodes
    return finish(1,
                  "the step's layout (" + std::to_string(group_nodes.size()) +
                      " nodes) does not fit one rendezvous message; run fewer nodes per step",
                  "ABORT");
  broadcast(start);
}

void Coordinator::handle_failure(std::uint32_t node, const rdzv::Message& m) {
  const auto attempt = m.get_uint("attempt", 0, 1u << 20);
  if (!attempt || *attempt != attempt_) return;  // a stale report from an earlier attempt
  const auto code = m.get_uint("code", 0, 255);
  std::ostringstream cause;
  cause << "worker rank " << m.get("rank").value_or("?") << " (local rank " << m.get("local").value_or("?")
        << ") on node " << node << " (" << nodes_[node].host << ") " << m.get("what").value_or("failed") << " at "
        << m.get("time").value_or("?");
  if (attempt_ > 0) cause << " in attempt " << attempt_ << " of " << config_.max_restarts + 1;
  if (nodes_[node].failure.empty()) nodes_[node].failure = cause.str();  // its HealthCheck's trigger
  if (phase_ != Phase::Running) return;  // not the first: not the root cause
  const auto tail = m.get("tail").value_or("");
  if (!tail.empty()) {
    cause << "; last lines of its stderr:";
    std::istringstream lines(tail);
    for (std::string line; std::getline(lines, line);) cause << "\n  | " << line;
  }
  if (const auto file = m.get("error_file")) cause << "\n  details: " << *file;
  nodes_[node].failed_attempt = attempt_;
  if (const auto since = m.get_uint("stalled_since_ms", 1, ~0ull >> 1)) {
    const auto stalled_in = m.get_uint("stalled_in", 0, 2);
    const auto step = m.get_uint("stalled_step", 0, ~0ull);
    const HangSuspicion suspicion{stalled_in ? *stalled_in : 1, step ? *step : ~0ull, *since};
    return note_hang(node, m, cause.str(), suspicion, code ? int(*code) : 1);
  }
  if (hang_) return decide_hang();  // its consequence, not a cause; the hang's own reports decide
  begin_stop(cause.str(), code ? int(*code) : 1);
}

// A node's hang watch fired: its report follows once its stalled workers
// have printed their stacks (3 s at most). Meanwhile the ranks it aborts make
// their peers fail elsewhere: those failures are the hang's consequences,
// not its cause, so from now on only hang reports compete.
void Coordinator::handle_hanging(std::uint32_t node, const rdzv::Message& m) {
  const auto attempt = m.get_uint("attempt", 0, 1u << 20);
  if (!attempt || *attempt != attempt_ || phase_ != Phase::Running || hang_) return;
  hang_.emplace();
  hang_->decide_at = Clock::now() + kHangNoticeWait;
  hang_->cause = "node " + node_name(node) + " noticed a hang (--ddp-hang-timeout) but sent no report within " +
                 seconds_text(kHangNoticeWait) + " (its agent died or was cut off?)";
  hang_->noticed_only = true;
}

// A hang report (--ddp-hang-timeout): every node whose ranks stalled reports
// within a moment of the others (its own check, or its workers failing once
// the first node stopped its stalled ones). Each names its own suspect
// (hang_watch.hpp); wait for the other nodes' reports, up to kHangSettle, and
// keep the most suspect (HangSuspicion: outside a collective first, then the
// step it reached, then silent longest).
void Coordinator::note_hang(std::uint32_t node, const rdzv::Message& m, const std::string& cause,
                            HangSuspicion suspicion, int code) {
  if (!hang_) hang_.emplace();
  if (hang_->noticed_only) hang_->decide_at = Clock::now() + kHangSettle;  // from the first report
  hang_->stalled_by_node.push_back("node " + std::to_string(node) + ": ranks " + m.get("stalled").value_or("?"));
  if (hang_->noticed_only || suspicion < hang_->suspicion) {
    hang_->noticed_only = false;
    hang_->cause = cause;
    hang_->code = code;
    hang_->suspicion = suspicion;
    hang_->culprit_node = node;
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
  std::string cause = hang_->cause;
  if (hang_->stalled_by_node.size() > 1) {
    cause += "\n  stalled as well (they waited for it):";
    for (const auto& line : hang_->stalled_by_node)
      if (line.rfind("node " + std::to_string(hang_->culprit_node) + ":", 0) != 0) cause += " " + line + ";";
    cause.pop_back();
  }
  const int code = hang_->code;
  hang_.reset();
  begin_stop(cause, code);
}

// A node stopped answering (heartbeats, or its connection ended). Its place
// goes to a spare, or its group is dropped (--ddp-min-nodes), and every worker
// restarts; a lost spare only costs a spare (roster.hpp). The node is never
// used again: its connection is closed and a new one from it refused.
void Coordinator::node_lost(std::uint32_t node, const std::string& why, bool unhealthy) {
  Node& n = nodes_[node];
  if (n.lost) return;
  n.lost = true;
  const std::string cause =
      "node " + node_name(node) + (unhealthy ? " is unhealthy, taken out of the step: " : " was lost: ") + why;
  if (phase_ == Phase::Rendezvous) return finish(1, "rendezvous failed: " + cause, "ABORT");
  if (gate_.serves(n.peer, node)) {
    // An unhealthy node's agent still listens: BYE lets it end well (its
    // workers are stopped); a lost one's connection is closed. Either may
    // close the connection at once and end the peer.
    gate_.mark_closing(n.peer);
    if (!unhealthy)
      gate_.close_peer(n.peer, "node lost");
    else if (node != 0)
      gate_.send(n.peer, rdzv::Message{"BYE", {}});
  }
  if (phase_ == Phase::Done) return;
  // What ran the health check: this node's own first failure of the attempt.
  const std::string trigger = unhealthy && !n.failure.empty() ? "\n  (the failure that ran its check: " + n.failure + ")"
                                                              : "";
  if (node == 0) {  // its agent hosts this coordinator, and MASTER_ADDR is its address
    can_go_on_ = false;
    const std::string what = cause + "; node 0 cannot be replaced (it hosts the rendezvous and MASTER_ADDR)" + trigger;
    if (phase_ == Phase::Running) return begin_stop(what, 1);
    cause_ = what;
    return check_stopped();
  }
  const auto change = lose_node(*roster_, node, config_.min_nodes, [this](std::uint32_t i) { return node_name(i); });
  if (change.kind == RosterChange::Kind::Unused) {
    spdlog::warn("rendezvous: {}", change.text);  // a spare: no worker was there
    return;
  }
  const std::string what = cause + " (attempt " + std::to_string(attempt_) + "); " + change.text;
  changes_.push_back(what);
  roster_changed_ = true;
  if (change.kind == RosterChange::Kind::CannotGoOn) can_go_on_ = false;
  if (phase_ == Phase::Running) return begin_stop(what, 1);
  // Stopping already: the workers that failed first most likely failed
  // because of this loss (a peer gone mid-collective); the loss is the cause.
  const auto first_line = cause_.substr(0, cause_.find('\n'));
  cause_ = what + (unhealthy            ? trigger
                   : first_line.empty() ? ""
                                        : "\n  (before the loss was noticed: " + first_line + ")");
  cause_code_ = 1;
  check_stopped();
}

void Coordinator::begin_stop(const std::string& cause, int exit_code) {
  hang_.reset();
  cause_ = cause;
  cause_code_ = exit_code;
  phase_ = Phase::Stopping;
  rdzv::Message stop{"STOP", {}};
  broadcast(stop.set("attempt", attempt_));
  check_stopped();
}

// Once every node that ran workers in this attempt has stopped them (or
// finished, or was lost): the next attempt, or the verdict.
void Coordinator::check_stopped() {
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (runs_workers(i) && !nodes_[i].finished && nodes_[i].stopped_attempt != attempt_) return;  // still stopping
  // Every node of the next attempt must still be there: a lost node, or one
  // that finished and left, cannot restart.
  bool all_present = can_go_on_;
  for (const auto& g : roster_->groups) all_present &= !nodes_[g.node].lost && gate_.connected(nodes_[g.node].peer);
  if (all_present && attempt_ < config_.max_restarts) {
    spdlog::warn("{}; restarting every worker on every node (attempt {} of {})", cause_, attempt_ + 2,
                 config_.max_restarts + 1);
    ++attempt_;
    return start_attempt();
  }
  if (all_present && roster_changed_)
    cause_ += "; no restart left to go on (--ddp-restarts=" + std::to_string(config_.max_restarts) + ")";
  if (!all_present && can_go_on_ && attempt_ < config_.max_restarts)
    for (const auto& g : roster_->groups)
      if (!nodes_[g.node].lost && !gate_.connected(nodes_[g.node].peer))
        cause_ += "; node " + node_name(g.node) + " had finished and left, so the run cannot restart";
  finish(cause_code_, cause_);
}

void Coordinator::finish(int exit_code, const std::string& cause, const char* verb) {
  if (verdict_) return;
  if (exit_code == 0)  // a run that survived lost nodes says which, once
    for (const auto& change : changes_) spdlog::warn("the run went on after: {}", change);
  verdict_ = Verdict{exit_code, cause};
  phase_ = Phase::Done;
  rdzv::Message done{verb, {}};
  broadcast(done.set("code", std::uint64_t(exit_code)).set("cause", cause));
}

std::string Coordinator::node_name(std::uint32_t node) const {
  const auto& n = nodes_[node];
  return std::to_string(node) + (n.host.empty() ? "" : " (" + n.host + (n.addr.empty() ? "" : ", " + n.addr) + ")");
}

void Coordinator::broadcast(const rdzv::Message& m) { gate_.broadcast(m); }

void Coordinator::tick() {
  gate_.tick();
  if (phase_ == Phase::Done) return;
  decide_hang();
  tick_deadlines(Clock::now());
}

// The rendezvous timeout, heartbeats both ways.
void Coordinator::tick_deadlines(Clock::time_point now) {
  if (phase_ == Phase::Rendezvous && now - started_ > config_.rdzv_timeout) {
    // The cause travels in one ABORT line (16 KiB at most): name the missing
    // nodes (the first 50 in full), count the ones that arrived.
    std::string missing;
    std::size_t missing_count = 0, arrived_count = 0;
    for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].joined) {
        ++arrived_count;
      } else if (++missing_count <= 50) {
        missing += ", " + node_name(i);
      }
    }
    if (missing_count > 50) missing += " and " + std::to_string(missing_count - 50) + " more";
    return finish(1,
                  "rendezvous timed out after " + std::to_string(config_.rdzv_timeout.count() / 1000) + " s: " +
                      std::to_string(missing_count) + " node(s) did not arrive: " + missing.substr(2) + " (" +
                      std::to_string(arrived_count) + " of " + std::to_string(nodes_.size()) +
                      " arrived); each missing node's agent says what it tried",
                  "ABORT");
  }
  if (now - last_heartbeat_ >= kHeartbeatEvery) {
    last_heartbeat_ = now;
    broadcast(rdzv::Message{"HB", {}});
  }
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.joined && !n.lost && !n.finished && now - n.last_seen > config_.heartbeat_timeout)
      node_lost(i, "no heartbeat for " + std::to_string(config_.heartbeat_timeout.count() / 1000) +
                       " s (node down or network cut?)");
  }
}

}  // namespace ddp::agent
