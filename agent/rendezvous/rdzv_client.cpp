#include "rendezvous/rdzv_client.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "ddp/base/parse.hpp"
#include "ddp/base/version.hpp"
#include "ddp/node/netif.hpp"
#include "rendezvous/heartbeat.hpp"

namespace ddp::agent {

namespace {

// A retry (node 0 not listening yet, or it shed us while swamped) waits 250 ms
// on average, drawn from 125-375 ms: nodes that were turned away together must
// not all come back together, as a fixed delay would bring them back: in
// waves, each shed again but for the few node 0 has room for.
constexpr auto kRetryMin = std::chrono::milliseconds(125);
constexpr std::uint32_t kRetrySpreadMs = 250;
// A rendezvous accepts and challenges at once: a port that neither refuses nor
// answers this long (a firewall dropping, a listener of something else) is
// passed by for now. Above one SYN retransmission (1 s).
constexpr auto kChallengeWait = std::chrono::milliseconds(3000);

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

// A connected socket's own address: this node's address toward node 0, as
// node 0 sees it. The socket knows it: no route lookup (getifaddrs()), which
// bench/rdzv_swarm.cpp would pay once for each of its thousands of clients.
std::string local_address(int fd) {
  sockaddr_in local{};
  socklen_t len = sizeof local;
  char text[INET_ADDRSTRLEN] = {};
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
      !inet_ntop(AF_INET, &local.sin_addr, text, sizeof text))
    return "?";
  return text;
}

}  // namespace

ClientConfig ClientConfig::for_plan(const NodePlan& plan, std::string secret, bool standalone, std::string host,
                                    std::vector<std::uint16_t> coordinator_ports) {
  ClientConfig cfg;
  cfg.run_id = plan.run_id;
  cfg.secret = std::move(secret);
  cfg.node_rank = plan.node_rank;
  cfg.join.nproc = plan.nproc;
  cfg.join.workers = plan.placements;
  cfg.join.host = std::move(host);
  cfg.coordinator_addr = standalone ? "127.0.0.1" : plan.master_addr;
  cfg.coordinator_ports = std::move(coordinator_ports);
  if (cfg.coordinator_ports.empty()) cfg.coordinator_ports.push_back(plan.rdzv_port);
  cfg.rdzv_timeout = std::chrono::milliseconds(plan.rdzv_timeout_ms);
  cfg.heartbeat_timeout = std::chrono::milliseconds(plan.heartbeat_timeout_ms);
  cfg.heartbeat_every = heartbeat_interval(plan.nnodes, cfg.heartbeat_timeout);
  return cfg;
}

RdzvClient::RdzvClient(EventLoop& loop, ClientConfig config, Events events)
    : loop_(loop),
      config_(std::move(config)),
      events_(std::move(events)),
      // Seeded from the kernel's entropy (rdzv::random_hex), as the nonces
      // are: cheaper than a std::random_device per client, which
      // bench/rdzv_swarm.cpp's thousands of clients in one process would pay.
      random_(std::uint32_t(std::stoul(rdzv::random_hex(4), nullptr, 16))) {}

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
  const auto addr = resolve(config_.coordinator_addr);
  if (!addr) {
    last_error_ = addr.error();
    next_try_ = Clock::now() + retry_delay();
    return;
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    last_error_ = std::string("socket(): ") + std::strerror(errno);
    next_try_ = Clock::now() + retry_delay();
    return;
  }
  if (!config_.source_addr.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (inet_pton(AF_INET, config_.source_addr.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      last_error_ = "cannot connect from " + config_.source_addr + ": " + std::strerror(errno);
      ::close(fd);
      next_try_ = Clock::now() + retry_delay();
      return;
    }
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port());
  to.sin_addr = *addr;
  char text[INET_ADDRSTRLEN] = {};
  peer_addr_ = inet_ntop(AF_INET, &to.sin_addr, text, sizeof text) ? text : "";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
    last_error_ = "port " + std::to_string(port()) + ": " + std::strerror(errno);
    ::close(fd);
    return next_port();
  }
  if (auto ok = loop_.add(fd, EPOLLOUT, [this](std::uint32_t ev) { on_connected(ev); }); !ok) {
    last_error_ = ok.error();
    ::close(fd);
    return next_port();
  }
  connecting_fd_ = fd;
  challenge_due_ = give_port_until(Clock::now());
}

void RdzvClient::on_connected(std::uint32_t) {
  const int fd = connecting_fd_;
  loop_.remove(fd);
  connecting_fd_ = -1;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    last_error_ = "port " + std::to_string(port()) + ": " + std::strerror(err);
    ::close(fd);
    return next_port();  // tick() tries it
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  local_addr_ = local_address(fd);
  last_seen_ = Clock::now();
  // The handshake is per connection: forget the nonces of an earlier one, so a
  // WELCOME recorded there (the connection cut after it was sent) cannot be
  // replayed on this one.
  server_nonce_.clear();
  client_nonce_.clear();
  challenge_.reset();
  challenge_due_ = give_port_until(Clock::now());
  conn_ = std::make_unique<Connection>(
      loop_, fd, [this](const rdzv::Message& m) { on_message(m); }, [this](const std::string& why) { on_close(why); });
}

std::chrono::milliseconds RdzvClient::retry_delay() {
  return kRetryMin + std::chrono::milliseconds(std::uniform_int_distribution<std::uint32_t>(0, kRetrySpreadMs)(random_));
}

// On to the next port (back to the first after a pause, once all were tried).
void RdzvClient::next_port() {
  port_index_ = (port_index_ + 1) % config_.coordinator_ports.size();
  if (port_index_ == 0) ++rounds_;
  next_try_ = port_index_ == 0 ? Clock::now() + retry_delay() : Clock::now();
}

// How long a port may neither refuse nor challenge: with one port, as long as
// the rendezvous lasts (it is node 0's, or nothing); with several, kChallengeWait,
// doubled each round (up to 4x) so a swamped node 0 is waited for in the end.
std::optional<RdzvClient::Clock::time_point> RdzvClient::give_port_until(Clock::time_point from) const {
  if (config_.coordinator_ports.size() < 2) return std::nullopt;
  return from + kChallengeWait * (1 << std::min(rounds_, 2));
}

void RdzvClient::send(const rdzv::Message& m) {
  if (conn_ && conn_->is_open()) conn_->send(m);
}

void RdzvClient::on_message(const rdzv::Message& m) {
  last_seen_ = Clock::now();
  if (older_coordinator_) return lost(older_coordinator_text());
  if (!welcomed_) return on_handshake(m);
  auto order = rdzv::decode_order(m);
  if (!order) return lost("the rendezvous on node 0 sent a message this agent cannot read: " + order.error());
  on_order(*order);
}

// Until node 0 has proved itself (a WELCOME or a REFUSED with its proof),
// the port may be anything's: a neighbour step's rendezvous, another program,
// a process of another user squatting the port or relaying to the real one.
// Nothing it says ends the rendezvous: the agent passes it by and looks on.
void RdzvClient::on_handshake(const rdzv::Message& m) {
  const auto pass_by = [&](const std::string& why) { conn_->close(why); };
  if (m.verb == "CHALLENGE") {
    if (challenge_) return pass_by("a second CHALLENGE");
    auto challenge = rdzv::Challenge::from_message(m);
    if (!challenge) return pass_by("not a rendezvous (malformed CHALLENGE: " + challenge.error() + ")");
    return on_challenge(*challenge);
  }
  if (!challenge_) return pass_by("not a rendezvous (" + printable(m.verb, 40) + " before any CHALLENGE)");
  if (m.verb == "WELCOME") {
    auto welcome = rdzv::Welcome::from_message(m);
    if (!welcome) return pass_by("malformed WELCOME: " + welcome.error());
    return on_welcome(*welcome);
  }
  if (m.verb == "REFUSED") {
    auto refused = rdzv::Refused::from_message(m);
    if (!refused) return pass_by("malformed REFUSED: " + refused.error());
    if (challenge_->version >= rdzv::kProtocolVersion &&
        rdzv::mac_equal(refused->mac, rdzv::refusal_proof(facts(), refused->reason)))
      return lost("the rendezvous refused this node: " + refused->reason);
    if (challenge_->version != rdzv::kProtocolVersion) return pass_by(other_release_text());
    return pass_by("refused, without node 0's proof (" + printable(refused->reason, 200) + ")");
  }
  pass_by("unexpected " + printable(m.verb, 40) + " before node 0 proved itself");
}

void RdzvClient::on_order(const rdzv::Order& order) {
  if (const auto* start = std::get_if<rdzv::Start>(&order)) return events_.on_start(*start);
  if (const auto* stop = std::get_if<rdzv::Stop>(&order)) return events_.on_stop(stop->attempt);
  if (std::holds_alternative<rdzv::CheckCompute>(order) || std::holds_alternative<rdzv::CheckNetwork>(order))
    return events_.on_check ? events_.on_check(order) : void();
  if (std::holds_alternative<rdzv::Bye>(order)) {  // our workers finished; the others go on without us
    done_ = true;
    return events_.on_done(Verdict{});
  }
  if (const auto* done = std::get_if<rdzv::Done>(&order)) {
    done_ = true;
    return events_.on_done(done->verdict);
  }
}

// The handshake keeps its form across releases: a coordinator of another
// version still gets this node's RESPONSE, so that it can end the step
// naming both releases. An older one (protocol 3-8) in its older proof with
// a marked nonce (rdzv_auth.hpp): its refusal carries no proof, so this node
// cannot tell it from a stranger posing as one, and looks on. A newer one
// in this protocol's proof, bound to its port: its refusal is proven.
void RdzvClient::on_challenge(const rdzv::Challenge& challenge) {
  if (challenge.run != config_.run_id || !rdzv::check_nonce(challenge.nonce)) {
    // A neighbour step's rendezvous (or not one at all): say so, and look on.
    // Sending may end the connection (the peer left): on_close has then run.
    send(rdzv::Elsewhere{config_.run_id}.to_message());
    if (conn_) conn_->close("the rendezvous of another step (" + printable(challenge.run, 40) + ")");
    return;
  }
  challenge_ = challenge;
  server_nonce_ = challenge.nonce;
  rdzv::Response response;
  response.node = config_.node_rank;
  response.release = kVersion;
  if (challenge.version >= rdzv::kProtocolVersion) {
    client_nonce_ = rdzv::random_hex(rdzv::kNonceBytes);
    response.cnonce = client_nonce_;
    response.mac = rdzv::client_proof(facts());
  } else {
    client_nonce_ = rdzv::marked_client_nonce();
    response.cnonce = client_nonce_;
    response.mac = rdzv::client_mac(config_.secret, config_.run_id, config_.node_rank, server_nonce_, client_nonce_);
  }
  send(response.to_message());
}

rdzv::HandshakeFacts RdzvClient::facts() const {
  return {config_.secret, config_.run_id, config_.node_rank, server_nonce_, client_nonce_, {peer_addr_, port()}};
}

std::string RdzvClient::other_release_text() {
  other_release_ = "port " + std::to_string(port()) + ": the rendezvous there says it runs slurm-ddp " +
                   printable(challenge_->release, 40) + " (protocol " + std::to_string(challenge_->version) + ")";
  return "the rendezvous there says it runs slurm-ddp " + printable(challenge_->release, 40) + " (protocol " +
         std::to_string(challenge_->version) + "), this node slurm-ddp " + kVersion + " (protocol " +
         std::to_string(rdzv::kProtocolVersion) +
         "): install the same slurm-ddp release on every node of the step (if node 0 has the same one, "
         "another process holds this port)";
}

void RdzvClient::on_welcome(const rdzv::Welcome& welcome) {
  // A coordinator of protocol 3 welcomes whatever version answers, with the
  // older proof; one of protocol 4-8 never welcomes another version.
  if (challenge_->version == rdzv::kChallengeFormVersion) {
    if (!rdzv::mac_equal(welcome.mac, rdzv::server_mac(config_.secret, config_.run_id, config_.node_rank, server_nonce_,
                                                       client_nonce_)))
      return conn_->close("it could not prove the step's secret");
    return join_older_coordinator();
  }
  if (challenge_->version != rdzv::kProtocolVersion) return conn_->close(other_release_text());
  // Only as the answer to this connection's RESPONSE: the proof binds both
  // of its nonces, and the address and port this node connected to.
  if (!rdzv::mac_equal(welcome.mac, rdzv::server_proof(facts())))
    return conn_->close("it could not prove the step's secret for this address and port");
  welcomed_ = true;
  conn_->seal(rdzv::Seal(rdzv::session_key(facts()), rdzv::Seal::Side::Agent), "the rendezvous on node 0");
  rdzv::Join join = config_.join;
  join.addr = local_addr_;
  send(join.to_message());
}

// A coordinator of protocol 3 (slurm-ddp 0.1) checks the version its JOIN carried:
// it gets one, in that protocol's form, and ends the step at once naming this
// node and both protocols. This agent says the same on its own node as soon
// as that coordinator answers or hangs up.
void RdzvClient::join_older_coordinator() {
  older_coordinator_ = true;
  rdzv::Message join{"JOIN", {}};
  send(join.set("version", rdzv::kProtocolVersion).set("host", config_.join.host));
}

std::string RdzvClient::older_coordinator_text() const {
  return "the rendezvous on node 0 runs an older slurm-ddp (protocol " + std::to_string(challenge_->version) +
         "), this agent slurm-ddp " + kVersion + " (protocol " + std::to_string(rdzv::kProtocolVersion) +
         "): node 0 ends the step; install the same slurm-ddp release on every node";
}

void RdzvClient::on_close(const std::string& why) {
  graveyard_.push_back(std::move(conn_));
  if (done_) return;
  if (older_coordinator_) return lost(older_coordinator_text());
  if (!welcomed_) {
    last_error_ = "port " + std::to_string(port()) + ": " + why;  // passed by; retried until the deadline
    return next_port();
  }
  lost("the connection to the rendezvous on node 0 ended: " + why);
}

std::string RdzvClient::ports_text() const {
  const auto& ports = config_.coordinator_ports;
  if (ports.size() == 1) return ":" + std::to_string(ports[0]);
  return " (any of the " + std::to_string(ports.size()) + " ports from " + std::to_string(ports[0]) +
         " on in PortRange)";
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
  if (!welcomed_) return tick_looking(now);
  if (conn_ && heartbeat_due(conn_->last_sent(), now, config_.heartbeat_every)) send(rdzv::Heartbeat{}.to_message());
  if (now - last_seen_ > config_.heartbeat_timeout)
    lost("no heartbeat from the rendezvous on node 0 (" + config_.coordinator_addr + ") for " +
         std::to_string(config_.heartbeat_timeout.count() / 1000) + " s (node 0 down or network cut?)");
}

// Not yet in: give up at the rendezvous timeout, pass by a port that neither
// refuses nor challenges, try the next.
void RdzvClient::tick_looking(Clock::time_point now) {
  if (now > deadline_) {
    const auto route = route_to(config_.coordinator_addr);
    const std::string via = route ? " via " + route->interface + " (from " + route->source_address + ")" : "";
    return lost("node " + std::to_string(config_.node_rank) + " (" + config_.join.host +
                ") cannot reach the rendezvous on node 0 at " + config_.coordinator_addr + ports_text() + via + ": " +
                last_error_ + " (" + std::to_string(tries_) + " tries in " +
                std::to_string(config_.rdzv_timeout.count() / 1000) + " s" +
                (other_release_.empty() ? std::string() : "; earlier, " + other_release_ + ", this node slurm-ddp " + kVersion) +
                "); check that node 0's agent started and that the port is open between compute nodes");
  }
  const bool overdue = challenge_due_ && now > *challenge_due_;
  if (connecting_fd_ >= 0 && overdue) {  // SYNs dropped: a firewall, or node 0 swamped
    loop_.remove(connecting_fd_);
    ::close(connecting_fd_);
    connecting_fd_ = -1;
    last_error_ = "port " + std::to_string(port()) + ": no answer";
    next_port();
  }
  // Connected, but no rendezvous answers there, or it does not finish the
  // handshake: a squatter costs one port's wait, no more.
  if (conn_ && overdue) conn_->close(challenge_ ? "no WELCOME after the RESPONSE" : "no rendezvous challenge");
  if (!conn_ && connecting_fd_ < 0 && now >= next_try_) try_connect();
}

void RdzvClient::report_failure(const Failure& failure) { send(rdzv::Fail{failure}.to_message()); }

void RdzvClient::report_hanging(std::uint32_t attempt) { send(rdzv::Hanging{attempt}.to_message()); }

void RdzvClient::report_load(const rdzv::Load& load) { send(load.to_message()); }

void RdzvClient::report_checked(const rdzv::Checked& checked) {
  rdzv::Checked c = checked;
  c.failed = c.failed.substr(0, 2048);
  send(c.to_message());
}

void RdzvClient::report_stopped(std::uint32_t attempt, const std::string& unhealthy) {
  send(rdzv::Stopped{attempt, unhealthy.substr(0, 2048)}.to_message());
}

void RdzvClient::report_finished(std::uint32_t attempt) { send(rdzv::Finished{attempt}.to_message()); }

void RdzvClient::report_signalled(int sig) {
  if (welcomed_ && !done_) send(rdzv::Signalled{std::uint32_t(sig)}.to_message());
}

}  // namespace ddp::agent
