// The rendezvous coordinator, run by node 0's agent (standalone: by the only
// agent, on loopback). Every agent, node 0's included, connects to it as a
// client (rdzv_client.hpp), so there is one protocol and one code path.
//
// Its connection gate (rdzv_gate.hpp) lets through only connections that
// prove the step's secret and speak this release's protocol; the job's
// lifecycle is here. It gathers every node's JOIN (worker count, address,
// host) and sends START with the ranks layout and the attempt's MASTER_PORT.
// While the workers run it exchanges heartbeats; the first worker failure
// (FAIL) or a lost node makes it send STOP to everyone; once every node has
// STOPPED it either starts the next attempt (check_stopped: the restart rule)
// or sends DONE with the root cause (wire/failure.hpp). When every node is
// FINISHED, DONE carries success.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddp/node/port_claim.hpp"
#include "ddp/plan/roster.hpp"
#include "ddp/wire/bad_node_report.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/node_plan.hpp"
#include "ddp/wire/placement.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "event_loop.hpp"
#include "rendezvous/rdzv_gate.hpp"
#include "rendezvous/blame.hpp"
#include "rendezvous/preflight.hpp"
#include "rendezvous/straggler.hpp"

namespace ddp::agent {

struct CoordinatorConfig {
  std::string run_id;
  std::string secret;
  std::uint32_t nnodes = 1;
  std::uint32_t max_restarts = 0;
  std::uint32_t spares = 0;     // --ddp-spares: the last K nodes wait to replace a lost one (roster.hpp)
  std::uint32_t min_nodes = 0;  // --ddp-min-nodes: without a spare, go on down to this many (0: never)
  StragglerAction stragglers = StragglerAction::Report;  // --ddp-stragglers: swap takes a named node out
  PreflightAction preflight = PreflightAction::Off;       // --ddp-preflight (preflight.hpp)
  std::uint32_t preflight_gemm_ms = 300;                  // each node's GEMM time, each round
  // Each transfer, each round: 250 ms, less when many turns of them (nodes
  // that share a machine take turns): about 10 s in all, 50 ms at least.
  std::uint32_t preflight_send_ms = 0;                    // 0: that rule
  std::string master_addr;
  // MASTER_PORT of an attempt, claimed on node 0 (ddp/node/port_claim.hpp)
  // until the next attempt's; or why no port could be had.
  std::function<Result<PortClaim>(std::uint32_t attempt)> claim_master_port;
  std::chrono::milliseconds rdzv_timeout{60000};
  std::chrono::milliseconds heartbeat_timeout{5000};
  std::chrono::milliseconds heartbeat_every{1000};    // heartbeat.hpp's rule
  std::chrono::milliseconds handshake_timeout{5000};  // an unauthenticated connection gets this long
  // Unauthenticated connections at once, at least (as many as the step has nodes, up
  // to 4096, when it has more; fewer when the open-files limit is low: a
  // quarter of it at most, so strangers can never take the descriptors the workers'
  // pipes and the real nodes' sockets need). Past it, a new connection sheds the
  // oldest pending one of the source address that holds the most (see on_accept()).
  std::size_t max_pending = 64;
  std::string setup_error;  // node 0 cannot run the step: the verdict, once every node has arrived
  bool verbose = false;     // print the step's plan (every node's workers) once all have joined

  // Node 0's, from its plan. `standalone`: one machine, MASTER_PORT chosen
  // free for each attempt unless the plan fixes it. `host` names node 0 in
  // the MasterInterface error.
  static CoordinatorConfig for_plan(const NodePlan& plan, std::string secret, bool standalone,
                                    const std::string& host);
};

// A node's hang suspect (--ddp-hang-timeout), the smaller the likelier: where
// it stalled (StalledIn: elsewhere, unknown, collective), then the step its
// progress file names (the one behind; the largest value when it wrote none),
// then its last progress in ms since the epoch.
struct HangSuspicion {
  std::uint64_t stalled_in = 1;
  std::uint64_t step = ~0ull;
  std::uint64_t since_ms = 0;
  auto operator<=>(const HangSuspicion&) const = default;
};
HangSuspicion suspicion_of(const HangFacts& hang);

// A failure as a related one: its first line is all the root cause shows.
Failure without_output(Failure f);

// The pre-flight under way (coordinator_preflight.cpp): its turns, the one
// running, and every node's figures so far.
struct PreflightState {
  std::vector<PreflightTurn> turns;
  std::size_t turn = 0;
  std::chrono::steady_clock::time_point began, turn_deadline;
  std::vector<std::uint32_t> waiting;         // compute: the current turn's nodes that have not answered
  std::map<std::string, Transfer> transfers;  // network: the current turn's not yet timed, by token
  std::map<std::uint32_t, CheckResult> compute;
  std::vector<TimedTransfer> timed;  // every transfer's figure (or failure)
  bool confirmed = false;            // the slow GEMMs were checked once more (confirmation_turns)
};

// Hang reports being compared by the coordinator (note_hang). Outside the
// class: clang cannot default-construct a nested struct with member
// initializers in optional::emplace.
struct PendingHang {
  std::chrono::steady_clock::time_point decide_at;
  RootCause cause;                        // the most suspect report so far, or the notice
  std::vector<StalledNode> stalled;       // every reporting node's stalled ranks
  HangSuspicion suspicion;
  bool noticed_only = true;  // a HANGING notice, no report yet: `cause` says so
};

class Coordinator {
 public:
  Coordinator(EventLoop& loop, CoordinatorConfig config);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Listens on every address at the first of `candidates` this node can
  // claim for the step's life and bind (0: any free port on loopback, for
  // standalone use); the other nodes look for it there (rdzv_client.hpp).
  Status listen(const std::vector<std::uint16_t>& candidates, PortRange range);
  std::uint16_t port() const { return gate_.port(); }
  // Heartbeats, deadlines, cleanup; call from the loop's top level every ~100 ms.
  void tick();
  // Set once DONE has been sent.
  const std::optional<Verdict>& verdict() const { return verdict_; }
  // Connections still open (node 0's own agent's included).
  std::size_t open_peers() const { return gate_.open_peers(); }
  // Connections that have not (yet) proved the step's secret.
  std::size_t pending_peers() const { return gate_.pending_peers(); }
  // The nodes taken out of the run for cause (a failed HealthCheck, a
  // straggler swapped, blamed twice), by Slurm's name, and why: a requeue
  // keeps them out, the site's BadNodeHook hears of them.
  const std::vector<BadNode>& taken_out() const { return taken_out_; }
  // The limit on pending_peers() in force: max_pending, or less under a low open-files limit.
  std::size_t max_pending() const { return gate_.max_pending(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Node {
    bool joined = false, lost = false, finished = false;
    std::uint64_t peer = 0;
    std::uint32_t nproc = 0;
    std::string host, addr, slurm_node;
    std::uint16_t check_port = 0;  // --ddp-preflight: where it receives transfers
    std::vector<WorkerPlacement> workers;  // from JOIN (for the verbose summary)
    Clock::time_point last_seen;
    std::optional<std::uint32_t> stopped_attempt;
    std::optional<std::uint32_t> failed_attempt;  // reported a failure in that attempt
    std::optional<Failure> failure;               // its first one in this attempt (what ran its HealthCheck)
    int signalled = 0;  // its agent's terminating signal (SIGNALLED): its end is Slurm's stop, not a loss
  };
  // The job's lifecycle, in the agents' words (lifecycle.hpp): Rendezvous
  // (gathering every node's JOIN), Preflight (--ddp-preflight: the checks
  // before attempt 0; the agents are still in their Rendezvous), Running (an attempt's workers run), Stopping
  // (STOP sent, waiting for every STOPPED), Done (the verdict sent). The
  // agents' WaitOrders has no phase here: a stopped node waits while the job
  // is Stopping, a spare or a node whose workers finished while it is Running.
  enum class Phase { Rendezvous, Preflight, Running, Stopping, Done };

  RdzvGate::Events gate_events();
  std::optional<std::string> admit(std::uint32_t node) const;
  void on_message(std::uint32_t node, std::uint64_t peer, const rdzv::Message& m);
  void on_close(std::uint32_t node, std::uint64_t peer, const std::string& why);
  void on_mismatch(std::uint32_t node, const std::string& why);
  void on_join(std::uint32_t node, const rdzv::Join& join);
  void on_fail(std::uint32_t node, Failure failure);
  void on_hanging(std::uint32_t node, const rdzv::Hanging& hanging);
  void on_stopped(std::uint32_t node, const rdzv::Stopped& stopped);
  void on_finished(std::uint32_t node, std::uint64_t peer, const rdzv::Finished& finished);
  void on_signalled(std::uint32_t node, const rdzv::Signalled& signalled);
  void note_hang(std::uint32_t node, const Failure& failure);
  void decide_hang();
  // `unhealthy`: its agent reported a failed HealthCheck (it still listens).
  void node_lost(std::uint32_t node, const std::string& why, bool unhealthy = false);
  Failure node_failure(std::uint32_t node, FailureKind kind, std::string detail) const;
  void all_joined();
  void print_summary() const;
  bool runs_workers(std::uint32_t node) const;  // in this attempt
  bool all_settled(const std::function<bool(const Node&)>& done);
  void start_attempt();
  void begin_stop(RootCause cause);
  void check_stopped();
  std::vector<std::uint32_t> absent_from_next_attempt() const;
  void finish(std::optional<RootCause> cause);
  void finish_setup(std::string why);
  RootCause root_cause(Failure failure) const;
  void broadcast(const rdzv::Message& m);
  void tick_deadlines(Clock::time_point now);
  void rendezvous_timed_out();
  std::string node_name(std::uint32_t node) const;
  std::vector<NodeSeat> seats() const;
  void tick_stragglers(Clock::time_point now);
  void blame(std::uint32_t node, const std::string& why);
  std::optional<std::uint32_t> take_kept_out();
  // --ddp-preflight (coordinator_preflight.cpp).
  void begin_preflight();
  std::vector<std::string> hosts() const;  // by node
  void next_turn();
  void on_checked(std::uint32_t node, const rdzv::Checked& checked);
  void send_turn(const PreflightTurn& turn);
  void record_check(std::uint32_t node, CheckResult result);
  void record_transfer(const std::string& token, std::optional<CheckResult> result);
  void note_transfer(const Transfer& t, CheckResult result);
  void end_turn_if_done();
  void tick_preflight(Clock::time_point now);
  void finish_preflight();
  void act_on_preflight(const std::vector<PreflightVerdict>& named);

  EventLoop& loop_;
  CoordinatorConfig config_;
  RdzvGate gate_;  // the connections; only authenticated ones reach the methods above
  PortClaim rdzv_claim_;    // the rendezvous port, for the step's life
  PortClaim master_claim_;  // this attempt's MASTER_PORT
  std::vector<Node> nodes_;
  std::size_t joined_ = 0;  // nodes_ with joined set: counted, not scanned per JOIN (16,384 nodes)
  Phase phase_ = Phase::Rendezvous;
  std::uint32_t attempt_ = 0;
  std::optional<RootCause> cause_;  // why this attempt is being stopped
  std::optional<Verdict> verdict_;
  std::optional<PendingHang> hang_;
  StragglerWatch stragglers_;  // the running nodes' LOADs, judged once a window
  BlameBook blames_;           // failures that were a node's own fault (blame.hpp)
  std::vector<std::uint32_t> kept_out_;  // blamed twice: taken out before the next attempt
  std::vector<BadNode> taken_out_;       // the nodes taken out for cause, by Slurm's name, and why
  std::optional<PreflightState> preflight_;
  // Who runs which group (roster.hpp), from the moment every node has joined;
  // which nodes run workers in this attempt (STOPPED and FINISHED come from
  // them); whether a lost node left the run unable to go on; what changed.
  std::optional<Roster> roster_;
  std::vector<bool> running_;
  std::size_t settled_ = 0;  // all_settled(): the nodes before it are done in this attempt
  bool can_go_on_ = true;
  bool roster_changed_ = false;  // since the last START: --ddp-verbose prints the plan again
  std::vector<std::string> changes_;
  Clock::time_point started_;
  Clock::time_point next_heartbeat_scan_;
  Clock::time_point next_silence_scan_{};  // tick_deadlines()'s next look for silent nodes
  Clock::time_point next_straggler_look_{};  // tick_stragglers()'s: every 100 ms, not every loop turn
};

}  // namespace ddp::agent
