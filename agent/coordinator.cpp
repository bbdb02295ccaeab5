#include "coordinator.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "ddp/netif.hpp"
#include "ddp/parse.hpp"

namespace ddp::agent {

namespace {

constexpr auto kHeartbeatEvery = std::chrono::milliseconds(1000);
// Connections accepted per readiness of the listen socket: a flood of connections
// must leave the loop time to read the real agents' responses in between (the
// socket stays readable, so the next turn of the loop accepts the rest).
constexpr int kAcceptBatch = 16;
// How long hang reports are compared, from the first, before the most
// suspect is the root cause: a node's check runs every 250 ms, and its
// stalled workers get up to 3 s to die of SIGABRT.
constexpr auto kHangSettle = std::chrono::seconds(4);
// From a node's first notice of a hang (HANGING) to its report: its stalled
// workers get 3 s to print their stacks and die.
constexpr auto kHangNoticeWait = std::chrono::seconds(8);
// The stranger log's window: a few lines, then one summary per window.
constexpr auto kStrangerWindow = std::chrono::seconds(10);

std::string ip_text(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

// A quarter of the soft open-files limit at most: strangers' connections must leave
// descriptors for the real nodes' sockets and the workers' output pipes.
std::size_t pending_limit(std::size_t wanted) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return wanted;
  return std::clamp<std::size_t>(std::size_t(lim.rlim_cur / 4), 1, std::max<std::size_t>(wanted, 1));
}

}  // namespace

void Coordinator::StrangerLog::note(const char* kind, const std::string& line) {
  flush(Clock::now(), false);
  if (!flooding_ && shown_[kind] < kLinesPerKind) {
    ++shown_[kind];
    spdlog::warn("{}", line);
  } else {
    ++hidden_[kind];
  }
}

void Coordinator::StrangerLog::flush(Clock::time_point now, bool force) {
  if (!force && now - window_start_ < kStrangerWindow) return;
  if (!hidden_.empty()) {
    std::size_t total = 0;
    std::string counts;
    for (const auto& [kind, n] : hidden_) {
      total += n;
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    }
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - window_start_).count();
    spdlog::warn(
        "rendezvous: {} more connection(s) without the step's secret closed in the last {} s, not listed "
        "one by one ({})",
        total, std::max<long long>(secs, 1), counts);
  }
  // While a flood goes on, only the summaries: individual lines again once a
  // window has passed with nothing left unsaid.
  flooding_ = !hidden_.empty();
  hidden_.clear();
  shown_.clear();
  window_start_ = now;
}

Coordinator::Coordinator(EventLoop& loop, CoordinatorConfig config)
    : loop_(loop),
      config_(std::move(config)),
      max_pending_(pending_limit(config_.max_pending)),
      nodes_(config_.nnodes),
      started_(Clock::now()),
      last_heartbeat_(Clock::now()) {}

Coordinator::~Coordinator() {
  strangers_.flush(Clock::now(), true);  // the counts of the last window are findings too
  peers_.clear();
  if (listen_fd_ >= 0) {
    loop_.remove(listen_fd_);
    ::close(listen_fd_);
  }
}

Status Coordinator::listen(std::uint16_t port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return fail(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(port == 0 ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 256) != 0)
    return fail(
        "cannot listen for the rendezvous on port " + std::to_string(port) + ": " + std::strerror(errno) +
        (errno == EADDRINUSE ? " (another job on this node holds it; widen PortRange in the site config)" : ""));
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

void Coordinator::on_accept() {
  for (int batch = 0; batch < kAcceptBatch; ++batch) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors. Idle strangers must not lock the real agents out
        // until their handshakes time out: shed one and accept in its place.
        if (shed_one("out of file descriptors")) continue;
        // Nothing to shed (the real nodes hold them all): the connection stays
        // queued. Say it once, and stop polling the listen socket until the next
        // tick(), or the loop would spin on it.
        if (!warned_fd_limit_)
          spdlog::error("rendezvous: cannot accept more connections ({}); node 0 needs one descriptor per node: "
                        "raise the open-files limit (ulimit -n) of the job",
                        std::strerror(errno));
        warned_fd_limit_ = true;
        pause_accepting();
      }
      return;  // EAGAIN: all accepted
    }
    const std::uint64_t id = next_peer_++;
    Peer& peer = peers_[id];
    peer.address = ip_text(from);
    peer.remote = peer.address + ":" + std::to_string(ntohs(from.sin_port));
    peer.server_nonce = rdzv::random_hex(rdzv::kNonceBytes);
    peer.deadline = Clock::now() + config_.handshake_timeout;
    peer.conn = std::make_unique<Connection>(
        loop_, fd, [this, id](const rdzv::Message& m) { on_message(id, m); },
        [this, id](const std::string& why) { on_close(id, why); });
    rdzv::Message challenge{"CHALLENGE", {}};
    challenge.set("version", rdzv::kProtocolVersion).set("run", config_.run_id).set("nonce", peer.server_nonce);
    peer.conn->send(challenge);
    // Many idle connections must not crowd out the real agents. Refusing the
    // newest would let a stranger who holds max_pending idle connections lock
    // everybody out; shedding the oldest lets an agent in, as its handshake
    // takes one round trip while an idle connection only grows older. Taking
    // the victim from the busiest source address keeps a flood from one
    // address from shedding agents that connect from others.
    while (pending_peers() > max_pending_ &&
           shed_one("more than " + std::to_string(max_pending_) + " unauthenticated connections at once")) {
    }
  }
}

bool Coordinator::shed_one(const std::string& why) {
  std::map<std::string_view, std::size_t> per_address;
  for (const auto& [id, p] : peers_)
    if (!p.node && !p.closing) ++per_address[p.address];
  // The busiest address, then its oldest connection (ids grow with time).
  std::optional<std::uint64_t> victim;
  std::size_t most = 0;
  for (const auto& [id, p] : peers_) {
    if (p.node || p.closing) continue;
    const std::size_t n = per_address[p.address];
    if (n > most) most = n, victim = id;
  }
  if (!victim) return false;
  const auto& p = peers_[*victim];
  refuse(*victim, "shed",
         "rendezvous: shed " + p.remote + ", the oldest of " + std::to_string(most) +
             " unauthenticated connection(s) from " + p.address + " (" + why + ")",
         why);
  return true;
}

void Coordinator::pause_accepting() {
  if (accept_paused_) return;
  accept_paused_ = loop_.modify(listen_fd_, 0).ok();
}

void Coordinator::refuse(std::uint64_t id, const char* kind, const std::string& line, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  it->second.closing = true;
  strangers_.note(kind, line);
  close_peer(id, why);
}

void Coordinator::close_peer(std::uint64_t id, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  it->second.conn->close(why);  // on_close() moves it to the graveyard
}

void Coordinator::on_close(std::uint64_t id, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  const auto node = it->second.node;
  if (!node && !it->second.closing)  // the stranger ended it, or broke the protocol (an oversized line...)
    strangers_.note("broke the protocol or hung up",
                    "rendezvous: closed " + it->second.remote + " before it authenticated: " + why);
  graveyard_.push_back(std::move(it->second.conn));
  peers_.erase(it);
  if (node && nodes_[*node].peer == id && !nodes_[*node].finished && phase_ != Phase::Done)
    node_lost(*node, "its agent's connection ended (" + why + ")");
}

void Coordinator::on_message(std::uint64_t id, const rdzv::Message& m) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  if (!peer.node) {
    if (m.verb == "RESPONSE") return handle_response(id, peer, m);
    return refuse(id, "spoke before authenticating",
                  "rendezvous: refused " + peer.remote + ": " + m.verb + " before authenticating", "not authenticated");
  }
  const std::uint32_t node = *peer.node;
  Node& n = nodes_[node];
  n.last_seen = Clock::now();
  if (m.verb == "HB") return;
  if (m.verb == "JOIN") return handle_join(node, m);
  if (m.verb == "FAIL") return handle_failure(node, m);
  if (m.verb == "HANGING") return handle_hanging(node, m);
  if (m.verb == "STOPPED" || m.verb == "FINISHED") {
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
          if (node != 0) peers_[id].conn->send(rdzv::Message{"BYE", {}});
          return;
        }
      finish(0, "");
    }
    return;
  }
  spdlog::warn("rendezvous: node {} sent an unknown message {}", node_name(node), m.verb);
}

void Coordinator::handle_response(std::uint64_t id, Peer& peer, const rdzv::Message& m) {
  const auto node = m.get_uint("node", 0, config_.nnodes ? config_.nnodes - 1 : 0);
  const auto cnonce = m.get("cnonce");
  const auto mac = m.get("mac");
  if (!node || !cnonce || !mac || !rdzv::check_nonce(*cnonce) ||
      !rdzv::mac_equal(
          *mac, rdzv::client_mac(config_.secret, config_.run_id, std::uint32_t(*node), peer.server_nonce, *cnonce))) {
    // Not one of this step's agents: another job, a stale agent, a port scan, a
    // response recorded elsewhere (the MAC binds this connection's own nonce).
    rdzv::Message refused{"REFUSED", {}};
    peer.conn->send(refused.set("reason", "authentication failed"));
    return refuse(id, "failed authentication",
                  "rendezvous: refused a connection from " + peer.remote + ": it could not prove the step's secret",
                  "authentication failed");
  }
  Node& n = nodes_[*node];
  if (n.joined || n.lost) {
    // It knows the secret: a misconfiguration (two agents for one node), not a
    // stranger; or a lost node back (a link restored, a SIGSTOP'd agent resumed):
    // its place was given away, and it is never used again in this step.
    const std::string reason = n.lost ? "node " + std::to_string(*node) + " was lost and is not used again in this step"
                                      : "node " + std::to_string(*node) + " has already joined";
    spdlog::warn("rendezvous: refused {}: {}", peer.remote, reason);
    rdzv::Message refused{"REFUSED", {}};
    peer.conn->send(refused.set("reason", reason));
    peer.closing = true;
    return close_peer(id, "duplicate node");
  }
  peer.node = std::uint32_t(*node);
  n.peer = id;
  n.last_seen = Clock::now();
  rdzv::Message welcome{"WELCOME", {}};
  peer.conn->send(welcome.set(
      "mac", rdzv::server_mac(config_.secret, config_.run_id, std::uint32_t(*node), peer.server_nonce, *cnonce)));
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
  if (!nproc || n.joined || phase_ != Phase::Gathering) return;
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
               config_.master_port(attempt_), port_);
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
  if (phase_ == Phase::Gathering) return finish(1, "rendezvous failed: " + cause, "ABORT");
  if (const auto it = peers_.find(n.peer); it != peers_.end() && it->second.node == node) {
    // An unhealthy node's agent still listens: BYE lets it end well (its
    // workers are stopped); a lost one's connection is closed. Either may
    // close the connection at once and erase the peer: `it` is not used after.
    it->second.closing = true;
    if (!unhealthy)
      close_peer(n.peer, "node lost");
    else if (node != 0)
      it->second.conn->send(rdzv::Message{"BYE", {}});
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
  for (const auto& g : roster_->groups) all_present &= !nodes_[g.node].lost && peers_.count(nodes_[g.node].peer) > 0;
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
      if (!nodes_[g.node].lost && peers_.count(nodes_[g.node].peer) == 0)
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

void Coordinator::broadcast(const rdzv::Message& m) {
  // A failed send closes that peer, and on_close erases it from peers_: walk
  // a snapshot of the ids, never the map itself (found by bench/scale_sim.py:
  // node 0 crashed at N >= 512 when an agent that had left reset its socket).
  std::vector<std::uint64_t> ids;
  ids.reserve(peers_.size());
  for (const auto& [id, peer] : peers_)
    if (peer.node) ids.push_back(id);
  for (const std::uint64_t id : ids) {
    auto it = peers_.find(id);
    if (it != peers_.end() && it->second.conn->is_open()) it->second.conn->send(m);
  }
}

std::string Coordinator::node_name(std::uint32_t node) const {
  const auto& n = nodes_[node];
  return std::to_string(node) + (n.host.empty() ? "" : " (" + n.host + (n.addr.empty() ? "" : ", " + n.addr) + ")");
}

void Coordinator::tick() {
  graveyard_.clear();
  const auto now = Clock::now();
  if (accept_paused_ && loop_.modify(listen_fd_, EPOLLIN).ok()) accept_paused_ = false;
  // Handshakes that drag on (slowloris) are cut.
  std::vector<std::uint64_t> late;
  for (const auto& [id, p] : peers_)
    if (!p.node && !p.closing && now > p.deadline) late.push_back(id);
  for (const auto id : late)
    refuse(id, "timed out",
           "rendezvous: dropped " + peers_[id].remote + ": no authentication within " +
               seconds_text(config_.handshake_timeout),
           "handshake timeout");
  strangers_.flush(now, false);
  if (phase_ == Phase::Done) return;
  decide_hang();
  if (phase_ == Phase::Gathering && now - started_ > config_.rdzv_timeout) {
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

namespace ddp::agent {
std::size_t Coordinator::open_peers() const { return peers_.size(); }
std::size_t Coordinator::pending_peers() const {
  return std::size_t(std::count_if(peers_.begin(), peers_.end(), [](const auto& p) { return !p.second.node; }));
}
}  // namespace ddp::agent
