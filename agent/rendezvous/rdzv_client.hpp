// An agent's side of the rendezvous: connects to the coordinator on node 0
// (retrying until the rendezvous timeout), proves the step's secret and checks
// the coordinator's proof, joins, then relays orders (START, STOP, DONE) to the
// agent and the agent's reports (FAIL, STOPPED, FINISHED) to the coordinator,
// with heartbeats both ways. The messages: ddp/wire/rdzv_messages.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ddp/wire/failure.hpp"
#include "ddp/wire/node_plan.hpp"
#include "ddp/wire/placement.hpp"
#include "ddp/wire/rdzv_auth.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "event_loop.hpp"
#include "rendezvous/connection.hpp"

namespace ddp::agent {

struct ClientConfig {
  std::string run_id;  // the step's: the handshake's MACs bind it
  std::string secret;
  std::uint32_t node_rank = 0;
  // What this node brings, sent as its JOIN once welcomed (its `addr` is
  // filled in then: the connection's own address, this node's toward node 0).
  rdzv::Join join;
  std::string coordinator_addr;  // node 0's address (MASTER_ADDR)
  // The local address to connect from; empty: the kernel's choice (agents).
  // bench/rdzv_swarm.cpp gives each simulated node one of its own.
  std::string source_addr;
  // Where node 0's coordinator may listen, tried in turn (ports.hpp's
  // rdzv_candidates): a neighbour step's coordinator answers with another
  // run id, a process that is not slurm-ddp not at all; both are passed by.
  std::vector<std::uint16_t> coordinator_ports;
  std::chrono::milliseconds rdzv_timeout{60000};
  std::chrono::milliseconds heartbeat_timeout{5000};
  std::chrono::milliseconds heartbeat_every{1000};  // heartbeat.hpp's rule

  // A node's, from its plan; `coordinator_ports` where node 0's coordinator
  // may listen (node 0 and standalone: the one it does, on loopback standalone).
  static ClientConfig for_plan(const NodePlan& plan, std::string secret, bool standalone, std::string host,
                               std::vector<std::uint16_t> coordinator_ports);
};

class RdzvClient {
 public:
  struct Events {
    std::function<void(const rdzv::Start&)> on_start;
    std::function<void(std::uint32_t attempt)> on_stop;
    // DONE: the job's verdict; BYE: this node's part is over (a success for it).
    std::function<void(const Verdict&)> on_done;
    // The coordinator cannot be reached or went silent: the message says what was tried.
    std::function<void(const std::string& why)> on_lost;
    // CHECKCPU or CHECKNET: a pre-flight check to run (duties/preflight_checks.hpp).
    std::function<void(const rdzv::Order&)> on_check;
  };

  RdzvClient(EventLoop& loop, ClientConfig config, Events events);
  ~RdzvClient();
  RdzvClient(const RdzvClient&) = delete;
  RdzvClient& operator=(const RdzvClient&) = delete;

  void begin();
  void tick();  // retries, heartbeats, timeouts; from the loop's top level
  void report_failure(const Failure& failure);
  // The hang watch fired here; the report (a FAIL) follows with the stacks.
  void report_hanging(std::uint32_t attempt);
  void report_load(const rdzv::Load& load);  // a LOAD window (duties/load_watch.hpp)
  // `unhealthy`: the site's health check failed here after a worker failure,
  // and what it said; the coordinator then takes this node out of the step.
  void report_stopped(std::uint32_t attempt, const std::string& unhealthy = "");
  void report_finished(std::uint32_t attempt);
  void report_signalled(int sig);  // this agent's terminating signal, before its workers are stopped
  void report_checked(const rdzv::Checked& checked);

 private:
  using Clock = std::chrono::steady_clock;
  void try_connect();
  void tick_looking(Clock::time_point now);
  void next_port();  // the current one was not this step's rendezvous
  std::chrono::milliseconds retry_delay();  // 125-375 ms, drawn
  std::optional<Clock::time_point> give_port_until(Clock::time_point from) const;
  std::uint16_t port() const { return config_.coordinator_ports[port_index_]; }
  std::string ports_text() const;  // where it looked, for the message when it gives up
  void on_connected(std::uint32_t events);
  void on_message(const rdzv::Message& m);
  void on_handshake(const rdzv::Message& m);
  void on_challenge(const rdzv::Challenge& challenge);
  void on_welcome(const rdzv::Welcome& welcome);
  rdzv::HandshakeFacts facts() const;  // this connection's, for the proofs (rdzv_auth.hpp)
  std::string other_release_text();  // and noted in other_release_, for the message at the timeout
  void join_older_coordinator();
  std::string older_coordinator_text() const;
  void on_order(const rdzv::Order& order);
  void on_close(const std::string& why);
  void lost(const std::string& why);
  void send(const rdzv::Message& m);

  EventLoop& loop_;
  ClientConfig config_;
  Events events_;
  int connecting_fd_ = -1;
  std::unique_ptr<Connection> conn_;
  std::vector<std::unique_ptr<Connection>> graveyard_;
  std::string client_nonce_, server_nonce_;
  std::optional<rdzv::Challenge> challenge_;  // this connection's
  std::string peer_addr_;   // the address connected to (node 0's, as the proofs bind it)
  std::string local_addr_;  // this connection's own address: JOIN's `addr`, this node's address toward node 0
  bool welcomed_ = false, done_ = false;
  bool older_coordinator_ = false;  // node 0 speaks protocol 3: told our version, we wait for its verdict
  Clock::time_point deadline_, next_try_, last_seen_;
  // A port that has not finished the handshake by then is passed by.
  std::optional<Clock::time_point> challenge_due_;
  std::size_t port_index_ = 0;
  int rounds_ = 0;  // times every port was tried
  int tries_ = 0;
  std::minstd_rand random_;  // the retries' spread
  std::string last_error_ = "not tried yet";
  std::string other_release_;  // a port that said it runs another release: kept past later ports' errors
};

}  // namespace ddp::agent
