// Node 0's coordinator (standalone: the only agent's, on loopback): the
// job's decisions (job.hpp) carried out over the rendezvous. Every agent,
// node 0's included, connects to it as a client (rendezvous/rdzv_client.hpp),
// so there is one protocol and one code path.
//
// Its gate (rendezvous/rdzv_gate.hpp) lets through only connections that
// prove the step's secret and speak this release's protocol. What the nodes
// say, and their silence past the heartbeat timeout, go to the job as
// events; the job's actions come back as messages: START with the attempt's
// MASTER_PORT (claimed on node 0 for the attempt), STOP, BYE, DONE, a lost
// node's connection closed. It also runs node 0's watches, whose verdicts
// are the job's events too: the pre-flight (preflight_run.hpp) and the
// straggler watch (straggler.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddp/node/port_claim.hpp"
#include "ddp/wire/node_plan.hpp"
#include "event_loop.hpp"
#include "job/job.hpp"
#include "job/preflight_run.hpp"
#include "job/straggler.hpp"
#include "rendezvous/rdzv_gate.hpp"

namespace ddp::agent {

// What the coordinator needs beyond node 0's plan.
struct CoordinatorSettings {
  std::string secret;       // the step's rendezvous secret
  std::string master_addr;  // the workers' MASTER_ADDR (the plan's, or node 0's address on MasterInterface)
  std::string setup_error;  // node 0 cannot run the step: the verdict, once every node has arrived
  // MASTER_PORT of an attempt, claimed on node 0 (ddp/node/port_claim.hpp)
  // until the next attempt's; or why no port could be had.
  std::function<Result<PortClaim>(std::uint32_t attempt)> claim_master_port;
  std::chrono::milliseconds handshake_timeout{5000};  // an unauthenticated connection gets this long
  // Unauthenticated connections at once, at least (rdzv_gate.cpp's pending_limit).
  std::size_t max_pending = 64;
  PreflightRun::Settings preflight;

  // Node 0's, from its plan. `standalone`: one machine, MASTER_PORT chosen
  // free for each attempt unless the plan fixes it. `host` names node 0 in
  // the MasterInterface error.
  static CoordinatorSettings for_plan(const NodePlan& plan, std::string secret, bool standalone,
                                      const std::string& host);
};

class Coordinator {
 public:
  Coordinator(EventLoop& loop, const NodePlan& plan, CoordinatorSettings settings);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Listens on every address at the first of `candidates` this node can
  // claim for the step's life and bind (0: any free port on loopback, for
  // standalone use); the other nodes look for it there (rdzv_client.hpp).
  Status listen(const std::vector<std::uint16_t>& candidates, PortRange range);
  std::uint16_t port() const { return gate_.port(); }
  // Heartbeats, deadlines, node 0's watches; from the loop's top level every ~100 ms.
  void tick();
  // Set once DONE has been sent.
  const std::optional<Verdict>& verdict() const { return job_.verdict(); }
  // The nodes taken out of the run (job.hpp).
  const std::vector<BadNode>& bad_nodes() const { return job_.bad_nodes(); }
  // Connections still open (node 0's own agent's included).
  std::size_t open_peers() const { return gate_.open_peers(); }
  // Connections that have not (yet) proved the step's secret.
  std::size_t pending_peers() const { return gate_.pending_peers(); }
  // How often node 0 and each node say they are alive (rendezvous/heartbeat.hpp).
  std::chrono::milliseconds heartbeat_every() const { return heartbeat_every_; }
  // The limit on pending_peers() in force: max_pending, or less under a low open-files limit.
  std::size_t max_pending() const { return gate_.max_pending(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Peer {
    std::uint64_t id = 0;  // the gate's, once admitted
    Clock::time_point last_seen;
  };

  RdzvGate::Events gate_events();
  void on_message(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m);
  void on_close(std::uint32_t node, std::uint64_t peer, const std::string& why);
  // The job's event, and its actions carried out. An event that comes while
  // the actions of another are carried out (a send fails: the gate closes
  // that peer) waits for them all: the job's decisions are carried out in
  // the order it made them.
  void decide(job::Event event);
  void carry_out(const job::Action& action);
  void start(const job::Start& start);
  void print_plan() const;
  void tick_deadlines(Clock::time_point now);
  void tick_stragglers(Clock::time_point now);

  CoordinatorSettings settings_;
  job::Job job_;
  RdzvGate gate_;  // the connections; only authenticated ones reach the methods above
  std::vector<Peer> peers_;  // by node
  PortClaim rdzv_claim_;     // the rendezvous port, for the step's life
  PortClaim master_claim_;   // this attempt's MASTER_PORT
  std::optional<PreflightRun> preflight_;
  StragglerWatch stragglers_;  // the running nodes' LOADs, judged once a window
  std::vector<job::Event> waiting_;  // events that came while actions were carried out
  bool deciding_ = false;
  std::chrono::milliseconds heartbeat_every_;
  Clock::time_point started_;
  Clock::time_point next_heartbeat_scan_;
  Clock::time_point next_silence_scan_{};    // tick_deadlines()'s next look for silent nodes
  Clock::time_point next_straggler_look_{};  // tick_stragglers()'s: every 100 ms, not every loop turn
};

}  // namespace ddp::agent
