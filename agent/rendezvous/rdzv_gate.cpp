#include "rendezvous/rdzv_gate.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <queue>
#include <string_view>
#include <tuple>

#include "ddp/base/parse.hpp"
#include "ddp/base/version.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "rendezvous/heartbeat.hpp"
#include "rendezvous/listen_socket.hpp"

namespace ddp::agent {

namespace {

// Connections accepted per readiness of the listen socket: a flood of connections
// must leave the loop time to read the real agents' responses in between (the
// socket stays readable, so the next turn of the loop accepts the rest).
constexpr int kAcceptBatch = 16;
// The listen queue asked for: the kernel takes net.core.somaxconn when lower.
constexpr int kListenQueue = 65535;
// The stranger log's window: a few lines, then one summary per window.
constexpr auto kStrangerWindow = std::chrono::seconds(10);

std::string ip_text(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

// Handshakes at once: at least `configured`, and as many as the step has
// nodes up to 4096, so that a large step's nodes, which all connect within a
// second, are not shed and sent back to retry (with too few, a rendezvous of
// a fraction of a second takes seconds of retries: doc/benchmarks.md). A
// quarter of the soft open-files limit at most: strangers' connections must
// leave descriptors for the real nodes' sockets and the workers' output
// pipes.
std::size_t pending_limit(std::size_t configured, std::uint32_t nnodes) {
  const std::size_t wanted = std::max<std::size_t>(configured, std::min<std::uint32_t>(nnodes, 4096));
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return wanted;
  return std::clamp<std::size_t>(std::size_t(lim.rlim_cur / 4), 1, std::max<std::size_t>(wanted, 1));
}

}  // namespace

void RdzvGate::StrangerLog::note(const char* kind, const std::string& line) {
  flush(Clock::now(), false);
  if (!flooding_ && shown_[kind] < kLinesPerKind) {
    ++shown_[kind];
    spdlog::warn("{}", line);
  } else {
    ++hidden_[kind];
  }
}

void RdzvGate::StrangerLog::flush(Clock::time_point now, bool force) {
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

RdzvGate::RdzvGate(EventLoop& loop, GateConfig config, Events events)
    : loop_(loop),
      config_(std::move(config)),
      events_(std::move(events)),
      max_pending_(pending_limit(config_.max_pending, config_.nnodes)),
      shed_after_(std::min(std::chrono::milliseconds(1000), config_.handshake_timeout / 2)) {}

RdzvGate::~RdzvGate() {
  strangers_.flush(Clock::now(), true);  // the counts of the last window are findings too
  peers_.clear();
  if (listen_fd_ >= 0) {
    loop_.remove(listen_fd_);
    ::close(listen_fd_);
  }
}

Result<bool> RdzvGate::listen(std::uint16_t port) {
  // The accept queue: all of a large step's nodes connect within a second, and
  // a connection the full queue drops waits a second for its SYN's
  // retransmission. Asked as long as the kernel allows: it caps the queue at
  // net.core.somaxconn (4096 since Linux 5.4), which admin.md says to raise
  // for steps of more nodes (a fixed 4096 here would make raising it
  // useless: most of 16,384 nodes' connections would be dropped).
  const int fd = listen_socket(port, port == 0, kListenQueue);
  if (fd == -EADDRINUSE) return false;
  if (fd < 0) return fail("cannot listen for the rendezvous on port " + std::to_string(port) + ": " + std::strerror(-fd));
  listen_fd_ = fd;
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  if (auto ok = loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); }); !ok) return fail(ok.error());
  return true;
}

void RdzvGate::on_accept() {
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
          spdlog::error(
              "rendezvous: cannot accept more connections ({}); node 0 needs one descriptor per node: "
              "raise the open-files limit (ulimit -n) of the job",
              std::strerror(errno));
        warned_fd_limit_ = true;
        pause_accepting(false);
      }
      break;  // EAGAIN: all accepted
    }
    const std::uint64_t id = next_peer_++;
    Peer& peer = peers_[id];
    ++pending_;
    peer.address = ip_text(from);
    peer.remote = peer.address + ":" + std::to_string(ntohs(from.sin_port));
    sockaddr_in local{};
    socklen_t local_len = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0)
      peer.node0 = {ip_text(local), ntohs(local.sin_port)};
    peer.server_nonce = rdzv::random_hex(rdzv::kNonceBytes);
    peer.accepted = Clock::now();
    peer.deadline = peer.accepted + config_.handshake_timeout;
    peer.conn = std::make_unique<Connection>(
        loop_, fd, [this, id](const rdzv::Message& m) { on_message(id, m); },
        [this, id](const std::string& why) { on_close(id, why); });
    if (!peer.conn->is_open()) {  // epoll refused it: the socket is closed, and nothing would ever call on_close
      peers_.erase(id);
      --pending_;
      continue;
    }
    waiting_.add(id, peer.address);
    peer.conn->send(rdzv::Challenge{rdzv::kProtocolVersion, kVersion, config_.run_id, peer.server_nonce}.to_message());
  }
  shed_excess();  // the batch's: accept4() returned EAGAIN, or the batch is full
}

// Many idle connections must not crowd out the real agents. Refusing the
// newest would let a stranger who holds max_pending idle connections lock
// everybody out; shedding the oldest lets an agent in, as its handshake
// takes one round trip while an idle connection only grows older. Taking
// each victim from the busiest source address keeps a flood from one
// address from shedding agents that connect from others. When every pending
// connection comes from an address of its own, as a large step's nodes do,
// only one that has had shed_after_ to answer is shed; while they are all
// younger, accepting pauses until there is room, and the loop reads their
// answers (thousands of nodes connecting at once would otherwise be shed
// before their answers are read, again and again). Once per batch of
// accepts: a look at the oldest waiting connection when each has an address
// of its own, else one pass over the waiting ones and a heap. (A pass per
// victim would be quadratic, and a pass over every peer per batch,
// authenticated ones included, most of node 0's CPU at 16,384 nodes.)
void RdzvGate::shed_excess() {
  if (waiting_.size() <= max_pending_) return;
  const std::string why = "more than " + std::to_string(max_pending_) + " unauthenticated connections at once";
  const auto old_enough = Clock::now() - shed_after_;
  if (waiting_.one_per_address()) {  // no heap needed: the oldest first, once it had its time
    while (waiting_.size() > max_pending_) {
      const auto it = peers_.find(*waiting_.oldest());
      if (it == peers_.end()) {  // cannot happen: on_close() takes it out of both
        waiting_.remove(*waiting_.oldest());
        continue;
      }
      if (it->second.accepted > old_enough) return pause_accepting(true);  // the rest are younger still
      const Peer& p = it->second;
      refuse(it->first, "shed",
             "rendezvous: shed " + p.remote + ", the oldest of 1 unauthenticated connection(s) from " + p.address +
                 " (" + why + ")",
             why);
    }
    return;
  }
  std::map<std::string, std::deque<std::uint64_t>> by_address;  // oldest first; copies: a shed peer is erased
  for (const auto& [id, address] : waiting_.by_age()) by_address[address].push_back(id);
  // The busiest address first; of equally busy ones, the one with the oldest
  // connection: (count, minus its oldest id, address), largest on top.
  std::priority_queue<std::tuple<std::size_t, std::int64_t, std::string>> busiest;
  for (const auto& [address, ids] : by_address) busiest.emplace(ids.size(), -std::int64_t(ids.front()), address);
  std::size_t excess = waiting_.size() - max_pending_;
  for (; excess > 0 && !busiest.empty(); --excess) {
    const auto [n, oldest, address] = busiest.top();
    auto& ids = by_address[address];
    const std::uint64_t victim = ids.front();
    if (n == 1 && peers_[victim].accepted > old_enough) break;  // one each, the oldest young: wait
    busiest.pop();
    ids.pop_front();
    refuse(victim, "shed",
           "rendezvous: shed " + peers_[victim].remote + ", the oldest of " + std::to_string(n) +
               " unauthenticated connection(s) from " + address + " (" + why + ")",
           why);
    if (!ids.empty()) busiest.emplace(n - 1, -std::int64_t(ids.front()), address);
  }
  if (excess > 0) pause_accepting(true);  // the rest are young and each from an address of its own
}

bool RdzvGate::shed_one(const std::string& why) {
  const auto victim = waiting_.oldest_of_busiest();
  if (!victim) return false;
  const auto& p = peers_[*victim];
  refuse(*victim, "shed",
         "rendezvous: shed " + p.remote + ", the oldest of " + std::to_string(waiting_.count(p.address)) +
             " unauthenticated connection(s) from " + p.address + " (" + why + ")",
         why);
  return true;
}

// Until the next tick() when out of descriptors (some may be free by then);
// while `until_room`, until the pending ones are within max_pending again (a
// handshake ended, or tick() shed one old enough): the connections wait in
// the kernel's accept queue meanwhile.
void RdzvGate::pause_accepting(bool until_room) {
  paused_until_room_ = until_room;
  if (accept_paused_) return;
  accept_paused_ = loop_.modify(listen_fd_, 0).ok();
}

void RdzvGate::refuse(std::uint64_t id, const char* kind, const std::string& line, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return waiting_.remove(id);
  set_closing(id, it->second);
  strangers_.note(kind, line);
  close_peer(id, why);
}

void RdzvGate::close_peer(std::uint64_t id, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  it->second.conn->close(why);  // on_close() moves it to the graveyard
}

void RdzvGate::on_close(std::uint64_t id, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  const auto node = it->second.node;
  if (!node && !it->second.closing)  // the stranger ended it, or broke the protocol (an oversized line...)
    strangers_.note("broke the protocol or hung up",
                    "rendezvous: closed " + it->second.remote + " before it authenticated: " + why);
  graveyard_.push_back(std::move(it->second.conn));
  peers_.erase(it);
  waiting_.remove(id);
  if (!node) --pending_;
  if (node) events_.on_close(*node, id, why);
}

void RdzvGate::on_message(std::uint64_t id, const rdzv::Message& m) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  if (!peer.node) {
    if (m.verb == "RESPONSE") return handle_response(id, peer, m);
    if (m.verb == "ELSEWHERE") {  // another step's agent looking for its own rendezvous (rdzv_messages.hpp)
      set_closing(id, peer);
      return close_peer(id, "another step's agent");
    }
    return refuse(id, "spoke before authenticating",
                  "rendezvous: refused " + peer.remote + ": " + m.verb + " before authenticating", "not authenticated");
  }
  events_.on_message(*peer.node, id, m);
}

void RdzvGate::handle_response(std::uint64_t id, Peer& peer, const rdzv::Message& m) {
  const auto r = rdzv::Response::from_message(m);
  const auto facts = [&] {
    return rdzv::HandshakeFacts{config_.secret, config_.run_id, r->node, peer.server_nonce, r->cnonce, peer.node0};
  };
  const bool well_formed = r && r->node < config_.nnodes && rdzv::check_nonce(r->cnonce);
  // This release's agents (and later ones) prove the secret for this address
  // and port; an older one in the older proof (it is refused by name, below).
  const bool proved =
      well_formed && (r->version >= rdzv::kProtocolVersion
                          ? rdzv::mac_equal(r->mac, rdzv::client_proof(facts()))
                          : rdzv::mac_equal(r->mac, rdzv::client_mac(config_.secret, config_.run_id, r->node,
                                                                      peer.server_nonce, r->cnonce)));
  if (!proved) {
    // Not one of this step's agents: another job, a stale agent, a port scan,
    // a response recorded elsewhere (the proof binds this connection's own
    // nonce), or one made for another port and relayed here. (The text
    // first: a failed send closes the peer and erases it.)
    const auto line = "rendezvous: refused a connection from " + peer.remote +
                      ": it could not prove the step's secret for this port (" + peer.node0.addr + ":" +
                      std::to_string(peer.node0.port) + ")";
    peer.conn->send(rdzv::Refused{"authentication failed"}.to_message());
    return refuse(id, "failed authentication", line, "authentication failed");
  }
  if (r->version < rdzv::kProtocolVersion) {
    // An agent of this release answers an older challenge with a marked
    // nonce: here, that answer was relayed from a port that posed as an
    // older rendezvous. No older agent sent it; the step goes on.
    if (rdzv::is_marked(r->cnonce))
      return refuse(id, "relayed",
                    "rendezvous: refused a connection from " + peer.remote + ": it relayed node " +
                        std::to_string(r->node) +
                        "'s answer to another port's challenge (a process of another user holding a rendezvous "
                        "port on node 0?)",
                    "relayed");
    return refuse_version(id, peer, *r);
  }
  if (r->version != rdzv::kProtocolVersion) return refuse_version(id, peer, *r);  // a newer agent, proven for this port
  if (const auto reason = events_.admit(r->node)) {
    spdlog::warn("rendezvous: refused {}: {}", peer.remote, *reason);
    // Closing by id: a failed send closes the peer and erases it (on_close),
    // so `peer` must not be touched after the send.
    set_closing(id, peer);
    peer.conn->send(rdzv::Refused{*reason, rdzv::refusal_proof(facts(), *reason)}.to_message());
    return close_peer(id, "duplicate node");
  }
  peer.node = r->node;
  --pending_;
  waiting_.remove(id);
  events_.admitted(r->node, id);
  rdzv::Seal seal(rdzv::session_key(facts()), rdzv::Seal::Side::Node0);
  const auto who = "node " + std::to_string(r->node) + " (" + peer.remote + ")";
  auto* conn = peer.conn.get();  // kept alive in the graveyard if the send fails and erases `peer`
  conn->send(rdzv::Welcome{rdzv::server_proof(facts())}.to_message());
  conn->seal(std::move(seal), who);  // the WELCOME went out plain; every line after it is sealed
}

// A node of this step (it proved the secret) that runs another release: it
// is told why, and so is the job (events_.mismatch).
void RdzvGate::refuse_version(std::uint64_t id, Peer& peer, const rdzv::Response& response) {
  const auto why = rdzv::refusal_for_version(response.node, "from " + peer.address, response);
  set_closing(id, peer);
  peer.conn->send(rdzv::Refused{why}.to_message());
  close_peer(id, "another protocol version");
  events_.mismatch(response.node, why);
}

void RdzvGate::broadcast(const rdzv::Message& m) {
  // A failed send closes that peer, and on_close erases it from peers_: walk
  // a snapshot of the ids, never the map itself (an agent that has left and
  // reset its socket makes a send fail in the middle of the walk).
  std::vector<std::uint64_t> ids;
  ids.reserve(peers_.size());
  for (const auto& [id, peer] : peers_)
    if (peer.node) ids.push_back(id);
  const auto line = rdzv::encode(m);  // once, not once per peer (16,384 heartbeats a second)
  if (line.empty()) return spdlog::error("internal error: cannot encode a {} message", m.verb);
  for (const std::uint64_t id : ids) {
    auto it = peers_.find(id);
    if (it != peers_.end() && it->second.conn->is_open()) it->second.conn->send_line(line);
  }
}

void RdzvGate::heartbeat(const rdzv::Message& m, std::chrono::milliseconds every) {
  const auto now = Clock::now();
  std::vector<std::uint64_t> due;  // a snapshot, as in broadcast()
  for (const auto& [id, peer] : peers_)
    if (peer.node && peer.conn->is_open() && heartbeat_due(peer.conn->last_sent(), now, every)) due.push_back(id);
  if (due.empty()) return;
  const auto line = rdzv::encode(m);
  for (const std::uint64_t id : due)
    if (auto it = peers_.find(id); it != peers_.end() && it->second.conn->is_open()) it->second.conn->send_line(line);
}

void RdzvGate::send(std::uint64_t peer, const rdzv::Message& m) {
  if (const auto it = peers_.find(peer); it != peers_.end()) it->second.conn->send(m);
}

bool RdzvGate::serves(std::uint64_t peer, std::uint32_t node) const {
  const auto it = peers_.find(peer);
  return it != peers_.end() && it->second.node == node;
}

void RdzvGate::mark_closing(std::uint64_t peer) {
  if (const auto it = peers_.find(peer); it != peers_.end()) set_closing(peer, it->second);
}

void RdzvGate::set_closing(std::uint64_t id, Peer& peer) {
  peer.closing = true;
  waiting_.remove(id);  // no longer one to shed or time out
}

void RdzvGate::tick() {
  graveyard_.clear();
  const auto now = Clock::now();
  if (accept_paused_ && (!paused_until_room_ || pending_ <= max_pending_) && loop_.modify(listen_fd_, EPOLLIN).ok())
    accept_paused_ = false;
  // Handshakes that drag on (slowloris) are cut: looked for every 100 ms, not
  // every loop turn (a turn per message, and 16,384 peers to look through).
  if (now < next_scan_) return strangers_.flush(now, false);
  next_scan_ = now + kScanEvery;
  shed_excess();  // young connections paused accepting: some may be old enough now
  std::vector<std::uint64_t> late;
  for (const auto& [id, address] : waiting_.by_age()) {  // oldest first: their deadlines come in order
    const auto it = peers_.find(id);
    if (it != peers_.end() && now <= it->second.deadline) break;
    late.push_back(id);  // (one not found: refuse() drops it from the index)
  }
  for (const auto id : late)
    refuse(id, "timed out",
           "rendezvous: dropped " + peers_[id].remote + ": no authentication within " +
               seconds_text(config_.handshake_timeout),
           "handshake timeout");
  strangers_.flush(now, false);
}

}  // namespace ddp::agent
