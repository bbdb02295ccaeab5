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
#include <cstring>
#include <string_view>

#include "ddp/base/parse.hpp"
#include "ddp/base/version.hpp"
#include "ddp/wire/rdzv_messages.hpp"

namespace ddp::agent {

namespace {

// Connections accepted per readiness of the listen socket: a flood of connections
// must leave the loop time to read the real agents' responses in between (the
// socket stays readable, so the next turn of the loop accepts the rest).
constexpr int kAcceptBatch = 16;
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
      max_pending_(pending_limit(config_.max_pending)) {}

RdzvGate::~RdzvGate() {
  strangers_.flush(Clock::now(), true);  // the counts of the last window are findings too
  peers_.clear();
  if (listen_fd_ >= 0) {
    loop_.remove(listen_fd_);
    ::close(listen_fd_);
  }
}

Result<bool> RdzvGate::listen(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(port == 0 ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 256) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) return false;
    return fail("cannot listen for the rendezvous on port " + std::to_string(port) + ": " + std::strerror(err));
  }
  listen_fd_ = fd;
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
    if (!peer.conn->is_open()) {  // epoll refused it: the socket is closed, and nothing would ever call on_close
      peers_.erase(id);
      continue;
    }
    peer.conn->send(rdzv::Challenge{rdzv::kProtocolVersion, kVersion, config_.run_id, peer.server_nonce}.to_message());
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

bool RdzvGate::shed_one(const std::string& why) {
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

void RdzvGate::pause_accepting() {
  if (accept_paused_) return;
  accept_paused_ = loop_.modify(listen_fd_, 0).ok();
}

void RdzvGate::refuse(std::uint64_t id, const char* kind, const std::string& line, const std::string& why) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  it->second.closing = true;
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
  if (node) events_.on_close(*node, id, why);
}

void RdzvGate::on_message(std::uint64_t id, const rdzv::Message& m) {
  const auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  if (!peer.node) {
    if (m.verb == "RESPONSE") return handle_response(id, peer, m);
    if (m.verb == "ELSEWHERE") {  // another step's agent looking for its own rendezvous (rdzv_messages.hpp)
      peer.closing = true;
      return close_peer(id, "another step's agent");
    }
    return refuse(id, "spoke before authenticating",
                  "rendezvous: refused " + peer.remote + ": " + m.verb + " before authenticating", "not authenticated");
  }
  events_.on_message(*peer.node, id, m);
}

void RdzvGate::handle_response(std::uint64_t id, Peer& peer, const rdzv::Message& m) {
  const auto r = rdzv::Response::from_message(m);
  if (!r || r->node >= config_.nnodes || !rdzv::check_nonce(r->cnonce) ||
      !rdzv::mac_equal(r->mac, rdzv::client_mac(config_.secret, config_.run_id, r->node, peer.server_nonce, r->cnonce))) {
    // Not one of this step's agents: another job, a stale agent, a port scan, a
    // response recorded elsewhere (the MAC binds this connection's own nonce).
    peer.conn->send(rdzv::Refused{"authentication failed"}.to_message());
    return refuse(id, "failed authentication",
                  "rendezvous: refused a connection from " + peer.remote + ": it could not prove the step's secret",
                  "authentication failed");
  }
  if (r->version != rdzv::kProtocolVersion) return refuse_version(id, peer, *r);
  if (const auto reason = events_.admit(r->node)) {
    spdlog::warn("rendezvous: refused {}: {}", peer.remote, *reason);
    // Closing by id: a failed send closes the peer and erases it (on_close),
    // so `peer` must not be touched after the send.
    peer.closing = true;
    peer.conn->send(rdzv::Refused{*reason}.to_message());
    return close_peer(id, "duplicate node");
  }
  peer.node = r->node;
  peer.conn->trust();
  events_.admitted(r->node, id);
  peer.conn->send(
      rdzv::Welcome{rdzv::server_mac(config_.secret, config_.run_id, r->node, peer.server_nonce, r->cnonce)}
          .to_message());
}

// A node of this step (it proved the secret) that runs another release: it
// is told why, and so is the job (events_.mismatch).
void RdzvGate::refuse_version(std::uint64_t id, Peer& peer, const rdzv::Response& response) {
  const auto why = rdzv::refusal_for_version(response.node, "from " + peer.address, response);
  peer.closing = true;
  peer.conn->send(rdzv::Refused{why}.to_message());
  close_peer(id, "another protocol version");
  events_.mismatch(response.node, why);
}

void RdzvGate::broadcast(const rdzv::Message& m) {
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

void RdzvGate::send(std::uint64_t peer, const rdzv::Message& m) {
  if (const auto it = peers_.find(peer); it != peers_.end()) it->second.conn->send(m);
}

bool RdzvGate::serves(std::uint64_t peer, std::uint32_t node) const {
  const auto it = peers_.find(peer);
  return it != peers_.end() && it->second.node == node;
}

void RdzvGate::mark_closing(std::uint64_t peer) {
  if (const auto it = peers_.find(peer); it != peers_.end()) it->second.closing = true;
}

std::size_t RdzvGate::pending_peers() const {
  return std::size_t(std::count_if(peers_.begin(), peers_.end(), [](const auto& p) { return !p.second.node; }));
}

void RdzvGate::tick() {
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
}

}  // namespace ddp::agent
