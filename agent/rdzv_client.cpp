#include "rdzv_client.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ddp/node/netif.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp::agent {

namespace {

constexpr auto kRetryEvery = std::chrono::milliseconds(250);
constexpr auto kHeartbeatEvery = std::chrono::milliseconds(1000);

// MASTER_ADDR is normally an address; NodeAddr may also be a name the admin
// chose for the node's interface.
Result<in_addr> resolve(const std::string& host) {
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) == 1) return addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || !res)
    return fail("cannot resolve '" + host + "': " + gai_strerror(rc));
  addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return addr;
}

}  // namespace

RdzvClient::RdzvClient(EventLoop& loop, ClientConfig config, Events events)
    : loop_(loop), config_(std::move(config)), events_(std::move(events)) {}

RdzvClient::~RdzvClient() {
  if (connecting_fd_ >= 0) {
    loop_.remove(connecting_fd_);
    ::close(connecting_fd_);
  }
}

void RdzvClient::begin() {
  deadline_ = Clock::now() + config_.rdzv_timeout;
  next_try_ = Clock::now();
  try_connect();
}

void RdzvClient::try_connect() {
  if (done_ || conn_ || connecting_fd_ >= 0) return;
  ++tries_;
  next_try_ = Clock::now() + kRetryEvery;
  const auto addr = resolve(config_.coordinator_addr);
  if (!addr) {
    last_error_ = addr.error();
    return;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    last_error_ = std::string("socket(): ") + std::strerror(errno);
    return;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(config_.coordinator_port);
  to.sin_addr = *addr;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
    last_error_ = std::strerror(errno);
    ::close(fd);
    return;
  }
  if (auto ok = loop_.add(fd, EPOLLOUT, [this](std::uint32_t ev) { on_connected(ev); }); !ok) {
    last_error_ = ok.error();
    ::close(fd);
    return;
  }
  connecting_fd_ = fd;
}

void RdzvClient::on_connected(std::uint32_t) {
  const int fd = connecting_fd_;
  loop_.remove(fd);
  connecting_fd_ = -1;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    last_error_ = std::strerror(err);
    ::close(fd);
    return;  // tick() retries
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  last_seen_ = last_heartbeat_ = Clock::now();
  // The handshake is per connection: forget the nonces of an earlier one, so a
  // WELCOME recorded there (the connection cut after it was sent) cannot be
  // replayed on this one.
  server_nonce_.clear();
  client_nonce_.clear();
  conn_ = std::make_unique<Connection>(
      loop_, fd, [this](const rdzv::Message& m) { on_message(m); }, [this](const std::string& why) { on_close(why); });
}

void RdzvClient::send(const rdzv::Message& m) {
  if (conn_ && conn_->is_open()) conn_->send(m);
}

void RdzvClient::on_message(const rdzv::Message& m) {
  last_seen_ = Clock::now();
  if (!welcomed_) {
    if (m.verb == "CHALLENGE") return on_challenge(m);
    if (m.verb == "WELCOME") return on_welcome(m);
    if (m.verb == "REFUSED") return lost("the rendezvous refused this node: " + m.get("reason").value_or("?"));
    return lost("unexpected " + m.verb + " before authentication");
  }
  if (m.verb == "HB") return;
  if (m.verb == "START") return on_start_order(m);
  if (m.verb == "STOP") {
    const auto attempt = m.get_uint("attempt", 0, 1u << 20);
    return events_.on_stop(attempt ? std::uint32_t(*attempt) : 0);
  }
  if (m.verb == "BYE") {  // our workers finished; the others go on without us
    done_ = true;
    return events_.on_done(0, "");
  }
  if (m.verb == "DONE" || m.verb == "ABORT") {
    done_ = true;
    const auto code = m.get_uint("code", 0, 255);
    return events_.on_done(code ? int(*code) : 1, m.get("cause").value_or(""));
  }
}

void RdzvClient::on_challenge(const rdzv::Message& m) {
  // One challenge per connection: answering a second would let the peer
  // collect MACs over nonces of its choosing.
  if (!client_nonce_.empty()) return lost("a second CHALLENGE from the rendezvous on node 0");
  const auto version = m.get_uint("version", 0, 1u << 20);
  if (!version || *version != std::uint64_t(rdzv::kProtocolVersion))
    return lost("the rendezvous on node 0 speaks protocol " + m.get("version").value_or("?") + ", this agent " +
                std::to_string(rdzv::kProtocolVersion) + ": install the same slurm-ddp release on every node");
  server_nonce_ = m.get("nonce").value_or("");
  if (!rdzv::check_nonce(server_nonce_)) return lost("malformed CHALLENGE from the rendezvous on node 0");
  client_nonce_ = rdzv::random_hex(rdzv::kNonceBytes);
  rdzv::Message response{"RESPONSE", {}};
  response.set("node", config_.node_rank)
      .set("cnonce", client_nonce_)
      .set("mac", rdzv::client_mac(config_.secret, config_.run_id, config_.node_rank, server_nonce_, client_nonce_));
  send(response);
}

void RdzvClient::on_welcome(const rdzv::Message& m) {
  const auto mac = m.get("mac").value_or("");
  // Only as the answer to this connection's RESPONSE (client_nonce_ is made
  // then): the MAC binds both of its nonces.
  if (client_nonce_.empty() ||
      !rdzv::mac_equal(mac,
                       rdzv::server_mac(config_.secret, config_.run_id, config_.node_rank, server_nonce_, client_nonce_)))
    return lost("the process at " + config_.coordinator_addr + ":" + std::to_string(config_.coordinator_port) +
                " is not this step's rendezvous (it could not prove the step's secret)");
  welcomed_ = true;
  rdzv::Message join{"JOIN", {}};
  const auto route = route_to(config_.coordinator_addr);
  join.set("version", rdzv::kProtocolVersion)
      .set("nproc", config_.nproc)
      .set("workers", encode_placements(config_.workers))
      .set("host", config_.host)
      .set("addr", route ? route->source_address : std::string("?"));
  send(join);
}

void RdzvClient::on_start_order(const rdzv::Message& m) {
  StartOrder order;
  const auto attempt = m.get_uint("attempt", 0, 1u << 20);
  const auto port = m.get_uint("master_port", 1, 65535);
  order.master_addr = m.get("master_addr").value_or("");
  auto nodes = m.get_uint_list("groups", 0, (1u << 20) - 1, 1u << 20);
  auto workers = m.get_uint_list("counts", 1, 1u << 16, 1u << 20);
  if (!attempt || !port || !nodes || !workers || order.master_addr.empty())
    return lost("malformed START from the rendezvous");
  order.attempt = std::uint32_t(*attempt);
  order.master_port = std::uint16_t(*port);
  order.group_nodes = std::move(nodes).value();
  order.group_workers = std::move(workers).value();
  events_.on_start(order);
}

void RdzvClient::on_close(const std::string& why) {
  graveyard_.push_back(std::move(conn_));
  if (done_) return;
  if (!welcomed_) {
    last_error_ = why;  // retried until the deadline
    return;
  }
  lost("the connection to the rendezvous on node 0 ended: " + why);
}

void RdzvClient::lost(const std::string& why) {
  if (done_) return;
  done_ = true;
  if (conn_) conn_->close(why);
  events_.on_lost(why);
}

void RdzvClient::tick() {
  graveyard_.clear();
  if (done_) return;
  const auto now = Clock::now();
  if (!welcomed_) {
    if (now > deadline_) {
      const auto route = route_to(config_.coordinator_addr);
      const std::string via = route ? " via " + route->interface + " (from " + route->source_address + ")" : "";
      return lost("node " + std::to_string(config_.node_rank) + " (" + config_.host +
                  ") cannot reach the rendezvous on node 0 at " + config_.coordinator_addr + ":" +
                  std::to_string(config_.coordinator_port) + via + ": " + last_error_ + " (" + std::to_string(tries_) +
                  " tries in " + std::to_string(config_.rdzv_timeout.count() / 1000) +
                  " s); check that node 0's agent started and that the port is open between compute nodes");
    }
    if (!conn_ && connecting_fd_ < 0 && now >= next_try_) try_connect();
    return;
  }
  if (now - last_heartbeat_ >= kHeartbeatEvery) {
    last_heartbeat_ = now;
    send(rdzv::Message{"HB", {}});
  }
  if (now - last_seen_ > config_.heartbeat_timeout)
    lost("no heartbeat from the rendezvous on node 0 (" + config_.coordinator_addr + ") for " +
         std::to_string(config_.heartbeat_timeout.count() / 1000) + " s (node 0 down or network cut?)");
}

void RdzvClient::report_failure(const FailureReport& r) {
  rdzv::Message m{"FAIL", {}};
  m.set("attempt", r.attempt)
      .set("rank", r.rank)
      .set("local", r.local_rank)
      .set("code", std::uint64_t(r.code))
      .set("what", r.what)
      .set("time", r.time)
      .set("tail", r.tail);
  if (!r.error_file.empty()) m.set("error_file", r.error_file);
  if (r.stalled_since_ms)
    m.set("stalled_since_ms", r.stalled_since_ms).set("stalled_in", r.stalled_in).set("stalled", r.stalled);
  if (r.stalled_since_ms && r.stalled_step) m.set("stalled_step", *r.stalled_step);
  send(m);
}

void RdzvClient::report_hanging(std::uint32_t attempt) {
  rdzv::Message m{"HANGING", {}};
  send(m.set("attempt", attempt));
}

void RdzvClient::report_stopped(std::uint32_t attempt, const std::string& unhealthy) {
  rdzv::Message m{"STOPPED", {}};
  m.set("attempt", attempt);
  if (!unhealthy.empty()) m.set("unhealthy", unhealthy.substr(0, 2048));
  send(m);
}

void RdzvClient::report_finished(std::uint32_t attempt) {
  rdzv::Message m{"FINISHED", {}};
  send(m.set("attempt", attempt));
}

}  // namespace ddp::agent
