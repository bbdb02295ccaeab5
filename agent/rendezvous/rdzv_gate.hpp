// The rendezvous's connection gate, node 0: listens, and lets through only
// connections that prove the step's secret (challenge-response,
// rdzv_protocol.hpp); everything else (another job, a stale agent, a port
// scan, a flood) is refused, timed out or shed without crowding out the real
// agents or flooding the user's terminal. The job's lifecycle behind it
// (roster, attempts, START/STOP/verdict) is the Coordinator's (coordinator.hpp),
// which hears only of authenticated peers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_auth.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "event_loop.hpp"
#include "rendezvous/connection.hpp"
#include "rendezvous/pending_index.hpp"

namespace ddp::agent {

struct GateConfig {
  std::string run_id;
  std::string secret;
  std::uint32_t nnodes = 1;
  std::chrono::milliseconds handshake_timeout{5000};  // an unauthenticated connection gets this long
  std::size_t max_pending = 64;                       // see CoordinatorConfig::max_pending
};

class RdzvGate {
 public:
  struct Events {
    // A connection proved the secret for `node`: nullopt lets it in, else why it is refused.
    std::function<std::optional<std::string>(std::uint32_t node)> admit;
    // It is in, as `peer` (before WELCOME goes out).
    std::function<void(std::uint32_t node, std::uint64_t peer)> admitted;
    std::function<void(std::uint32_t node, std::uint64_t peer, const rdzv::Message&)> on_message;
    // An authenticated connection ended (not called for strangers).
    std::function<void(std::uint32_t node, std::uint64_t peer, const std::string& why)> on_close;
    // A node of this step (it proved the secret) runs another protocol
    // version: refused, with `why` (naming both versions).
    std::function<void(std::uint32_t node, const std::string& why)> mismatch;
  };

  RdzvGate(EventLoop& loop, GateConfig config, Events events);
  ~RdzvGate();
  RdzvGate(const RdzvGate&) = delete;
  RdzvGate& operator=(const RdzvGate&) = delete;

  // Listens on every address at `port` (0: any free port on loopback, for
  // standalone use): false when another socket has the port.
  Result<bool> listen(std::uint16_t port);
  std::uint16_t port() const { return port_; }
  // Closed connections freed, accepting resumed, slow handshakes cut, the
  // stranger log's summary; from the loop's top level.
  void tick();

  void send(std::uint64_t peer, const rdzv::Message& m);
  void broadcast(const rdzv::Message& m);  // to every authenticated peer
  // `m` (a HEARTBEAT) to every authenticated peer sent nothing for `every`
  // (heartbeat.hpp's heartbeat_due).
  void heartbeat(const rdzv::Message& m, std::chrono::milliseconds every);
  // Whether `peer` is still connected, and authenticated as `node`.
  bool connected(std::uint64_t peer) const { return peers_.count(peer) > 0; }
  bool serves(std::uint64_t peer, std::uint32_t node) const;
  // We are done with it: its close needs no word (on_close is still called).
  void mark_closing(std::uint64_t peer);
  void close_peer(std::uint64_t peer, const std::string& why);

  std::size_t open_peers() const { return peers_.size(); }
  std::size_t pending_peers() const { return pending_; }
  std::size_t max_pending() const { return max_pending_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Peer {
    std::unique_ptr<Connection> conn;
    std::string remote;   // "addr:port", for the log
    std::string address;  // the source address alone: shedding is fair between addresses
    std::string server_nonce;
    rdzv::Endpoint node0;               // this connection's own address and port: the proofs bind them
    std::optional<std::uint32_t> node;  // set once authenticated
    Clock::time_point accepted;         // when
    Clock::time_point deadline;         // for the handshake
    bool closing = false;               // we closed it and said why: on_close() need not
  };
  // What happens to connections without the step's secret (refused, timed out, shed,
  // broken protocol), said without flooding the user's terminal: the first few of
  // each kind one line each, so every kind has an example with its details, then
  // one summary line per window with the counts of the rest.
  class StrangerLog {
   public:
    void note(const char* kind, const std::string& line);
    void flush(Clock::time_point now, bool force);  // the summary, once the window is over (or now)

   private:
    Clock::time_point window_start_ = Clock::now();
    static constexpr std::size_t kLinesPerKind = 2;
    std::map<std::string, std::size_t> shown_;   // kind -> lines shown this window
    std::map<std::string, std::size_t> hidden_;  // kind -> count not shown
    bool flooding_ = false;                      // the last window had to summarise: summaries only
  };

  void on_accept();
  void on_message(std::uint64_t id, const rdzv::Message& m);
  void on_close(std::uint64_t id, const std::string& why);
  void handle_response(std::uint64_t id, Peer& peer, const rdzv::Message& m);
  void refuse_version(std::uint64_t id, Peer& peer, const rdzv::Response& response);
  // Closes an unauthenticated connection, logged (rate-limited) as `kind`: `line`.
  void refuse(std::uint64_t id, const char* kind, const std::string& line, const std::string& why);
  // Closes the oldest pending connection of the source address with the most pending
  // ones; false when none is pending.
  bool shed_one(const std::string& why);
  void shed_excess();  // past max_pending: the oldest of the busiest addresses
  // We closed it and said why (on_close() need not), or will: no longer waiting.
  void set_closing(std::uint64_t id, Peer& peer);
  void pause_accepting(bool until_room);

  EventLoop& loop_;
  GateConfig config_;
  Events events_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::map<std::uint64_t, Peer> peers_;
  std::size_t pending_ = 0;  // peers_ without a node: not authenticated (yet)
  PendingIndex waiting_;     // those of them not closing: the ones to shed or time out
  static constexpr std::chrono::milliseconds kScanEvery{100};
  Clock::time_point next_scan_{};  // tick()'s next look for late handshakes
  std::vector<std::unique_ptr<Connection>> graveyard_;  // closed in callbacks, destroyed in tick()
  std::uint64_t next_peer_ = 1;
  bool warned_fd_limit_ = false;  // EMFILE said once
  bool accept_paused_ = false;    // out of descriptors, or every pending one young: tick() listens again
  bool paused_until_room_ = false;  // ... the latter: once pending_ <= max_pending_
  std::size_t max_pending_ = 64;
  // While every pending connection comes from an address of its own, one is
  // shed only once it had this long to answer the challenge (an agent needs
  // one round trip; a simulator of 16,384 nodes on two cores needs up to a
  // second): 1 s, or half the handshake timeout.
  std::chrono::milliseconds shed_after_{1000};
  StrangerLog strangers_;
};

}  // namespace ddp::agent
