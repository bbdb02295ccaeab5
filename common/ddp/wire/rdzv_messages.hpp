// The rendezvous' messages between the agents and node 0's coordinator: one
// struct per message, each with its to_message() and from_message() side by
// side in rdzv_messages.cpp, on top of the line format and the authentication
// of rdzv_protocol.hpp. from_message() is strict: a missing or malformed field
// is an error naming the message and the field, and
// from_message(m.to_message()) == m for every message that fits a line.
//
//   coordinator -> agent   CHALLENGE, WELCOME, REFUSED   the handshake
//   agent -> coordinator   RESPONSE                      the handshake
//   agent -> coordinator   JOIN, HB, FAIL, HANGING, LOAD, STOPPED, FINISHED, CHECKED, SIGNALLED
//   coordinator -> agent   HB, CHECKCPU, CHECKNET, START, STOP, BYE, DONE
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ddp/base/result.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/placement.hpp"
#include "ddp/wire/rdzv_protocol.hpp"

namespace ddp::rdzv {

// The messages' version, set here and nowhere else; every node of a step must
// run the same. The handshake keeps its form across versions, so that agents
// of two releases can tell each other which they run: node 0 refuses another
// version at RESPONSE, naming both (refusal_for_version).
//   2: START names each group's node (--ddp-spares)
//   3: JOIN's `workers` in the placements' one text form (placement.hpp)
//   4: CHALLENGE and RESPONSE carry version and release, JOIN no longer;
//      FAIL and DONE carry the failure as data (failure.hpp); ABORT is a DONE;
//      START without `world` (the sum of `counts`)
//   5: CHALLENGE says version=3 (kChallengeFormVersion) and the coordinator's
//      own in `protocol`, so that an agent of protocol 3 (slurm-ddp 0.1.0)
//      answers and is refused by name within seconds, instead of leaving in
//      silence and being missed at the rendezvous timeout; a RESPONSE without
//      a version is such an agent's. And an agent that meets a coordinator of
//      protocol 3 answers its JOIN, which that coordinator checks, so it ends
//      the step at once naming this node and both protocols.
//   6: FAIL and DONE carry the failure's class (failure_class.hpp); LOAD;
//      JOIN the node's Slurm name (a requeue keeps nodes out by it);
//      CHECKCPU, CHECKNET and CHECKED (--ddp-preflight)
//   7: the pre-flight's transfers go between any two nodes, node 0 one of
//      them: JOIN's `check_port` (where a node receives them), CHECKNET names
//      the receiving node's address, CHECKED its `token` and the receiver's
//      `kbps`
//   8: SIGNALLED (an agent's terminating signal, before its connection ends)
//   9: the handshake's proofs bind node 0's address and port, REFUSED from
//      node 0 carries its own proof, and every later line is sealed
//      (rdzv_auth.hpp): a process squatting a candidate port can neither end
//      the rendezvous nor relay to the real one and speak in it
inline constexpr std::uint32_t kProtocolVersion = 9;
// What CHALLENGE's `version` says from protocol 5 on: agents of protocol 3
// compare it with theirs and leave unless equal; later agents read `protocol`.
inline constexpr std::uint32_t kChallengeFormVersion = 3;

// ---- the handshake (the same form in every version) ----------------------

struct Challenge {  // coordinator -> agent, first thing on a connection
  std::uint32_t version = kProtocolVersion;  // the coordinator's (on the wire: `protocol`, or `version` before 5)
  std::string release;  // slurm-ddp's version, for the message when versions differ
  std::string run;      // the run id the MACs bind
  std::string nonce;    // the server nonce
  Message to_message() const;
  static Result<Challenge> from_message(const Message& m);
  bool operator==(const Challenge&) const = default;
};

struct Response {  // agent -> coordinator: proves the step's secret for `node`
  std::uint32_t node = 0;
  std::string cnonce;
  std::string mac;  // client_mac(secret, run, node, nonce, cnonce)
  std::uint32_t version = kProtocolVersion;  // absent on the wire: protocol 3
  std::string release;
  Message to_message() const;
  static Result<Response> from_message(const Message& m);
  bool operator==(const Response&) const = default;
};

struct Welcome {  // coordinator -> agent: admitted, and the coordinator's own proof
  std::string mac;  // server_mac(secret, run, node, nonce, cnonce)
  Message to_message() const;
  static Result<Welcome> from_message(const Message& m);
  bool operator==(const Welcome&) const = default;
};

struct Refused {  // coordinator -> agent, then the connection closes
  std::string reason;
  std::string mac = {};  // refusal_proof (rdzv_auth.hpp) when node 0 refuses a node of this step; "" otherwise
  Message to_message() const;
  static Result<Refused> from_message(const Message& m);
  bool operator==(const Refused&) const = default;
};

// agent -> coordinator, instead of a RESPONSE: the CHALLENGE named another
// step's run. Steps sharing node 0 share its port range, so an agent looking
// for its own rendezvous may knock at a neighbour's (ports.hpp); it says so and
// leaves, and the neighbour lets it go without a warning.
struct Elsewhere {
  std::string run;  // the run this agent looks for
  Message to_message() const;
  static Result<Elsewhere> from_message(const Message& m);
  bool operator==(const Elsewhere&) const = default;
};

// The reason node 0 refuses a node of another version, and the root cause it
// gives the job: one message naming both versions and the fix.
std::string refusal_for_version(std::uint32_t node, const std::string& from, const Response& theirs);

// ---- agent -> coordinator -------------------------------------------------

struct Join {  // once welcomed: what this node brings
  std::uint32_t nproc = 1;                // the workers it can run
  std::vector<WorkerPlacement> workers;   // their placements (for node 0's --ddp-verbose summary)
  std::string host;
  std::string addr;                       // its address toward node 0
  std::string slurm_node;                 // its name in Slurm (SLURMD_NODENAME); "" standalone
  std::uint16_t check_port = 0;           // --ddp-preflight: where it receives transfers (0: it does not)
  Message to_message() const;
  static Result<Join> from_message(const Message& m);
  bool operator==(const Join&) const = default;
};

struct Heartbeat {  // both ways, every second
  Message to_message() const;
  static Result<Heartbeat> from_message(const Message& m);
  bool operator==(const Heartbeat&) const = default;
};

struct Fail {  // this node's first failure in an attempt
  Failure failure;
  Message to_message() const;
  static Result<Fail> from_message(const Message& m);
  bool operator==(const Fail&) const = default;
};

struct Hanging {  // the hang watch fired here; the report (a FAIL) follows with the stacks
  std::uint32_t attempt = 0;
  Message to_message() const;
  static Result<Hanging> from_message(const Message& m);
  bool operator==(const Hanging&) const = default;
};

// How this node's workers spent the last window (agent/node/duties/load_watch.hpp),
// in permille of its wall time, by local rank: running on a CPU or waiting
// for one (busy = the two together), and how much of it the cpu cgroup
// throttled them. Node 0 compares the nodes (job/straggler.hpp).
struct Load {
  std::uint32_t attempt = 0;
  std::uint32_t window_ms = 0;
  std::vector<std::uint32_t> on_cpu, waiting;
  std::optional<std::uint32_t> throttled;  // none: no cpu controller
  // GPU steps: each worker's GPU's share of the window in NCCL's collectives
  // (agent/nccl_profiler/), permille; empty when not every worker has one.
  std::vector<std::uint32_t> nccl = {};
  Message to_message() const;
  static Result<Load> from_message(const Message& m);
  bool operator==(const Load&) const = default;
};

struct Stopped {  // this node's workers of `attempt` are stopped
  std::uint32_t attempt = 0;
  std::string unhealthy;  // the site's HealthCheck failed here: what it said ("" = healthy or none)
  Message to_message() const;
  static Result<Stopped> from_message(const Message& m);
  bool operator==(const Stopped&) const = default;
};

// This node's agent got a terminating signal (Slurm stopping the job or the
// step, srun interrupted): sent before it stops its workers, so that node 0
// takes the end of its connection that follows for Slurm's stop, not a loss.
struct Signalled {
  std::uint32_t signal = 0;
  Message to_message() const;
  static Result<Signalled> from_message(const Message& m);
  bool operator==(const Signalled&) const = default;
};

struct Finished {  // every worker of this node exited 0
  std::uint32_t attempt = 0;
  Message to_message() const;
  static Result<Finished> from_message(const Message& m);
  bool operator==(const Finished&) const = default;
};

// A pre-flight check's outcome (rdzv_preflight.cpp): a compute check's
// rate; a network transfer's rate, said by the node that received it (its
// check sink timed the bytes), with the transfer's token, or from it the
// token alone when the bytes came too fast to time; or why a check could
// not run (with its transfer's token, for a network check).
struct Checked {
  std::string what;                     // "compute" or "network"
  std::optional<std::uint64_t> mflops;  // compute: the node's GEMM rate, in MFLOP/s
  std::string failed;                   // the check could not run here: why ("" = it ran)
  std::string token = {};                  // network: the transfer's (CHECKNET's)
  std::optional<std::uint64_t> kbps = {};  // network, from its receiver: the rate, in kB/s
  Message to_message() const;
  static Result<Checked> from_message(const Message& m);
  bool operator==(const Checked&) const = default;
};

// ---- coordinator -> agent -------------------------------------------------

// --ddp-preflight: time a GEMM on this node's CPUs for `ms` (rdzv_preflight.cpp).
struct CheckCompute {
  std::uint32_t ms = 500;
  Message to_message() const;
  static Result<CheckCompute> from_message(const Message& m);
  bool operator==(const CheckCompute&) const = default;
};

// --ddp-preflight: connect to another node's check sink at `addr`:`port`
// (its address toward node 0, its JOIN's check_port), send `token`, then
// bytes for `ms` ms; the receiving node times their arrival.
struct CheckNetwork {
  std::string addr;
  std::uint16_t port = 0;
  std::string token;
  std::uint32_t ms = 250;
  Message to_message() const;
  static Result<CheckNetwork> from_message(const Message& m);
  bool operator==(const CheckNetwork&) const = default;
};

struct Start {  // run an attempt
  std::uint32_t attempt = 0;
  std::string master_addr;
  std::uint16_t master_port = 0;
  // By group rank (plan/roster.hpp): the node that runs each group, and its workers.
  std::vector<std::uint32_t> group_nodes;
  std::vector<std::uint32_t> group_workers;
  Message to_message() const;
  static Result<Start> from_message(const Message& m);
  bool operator==(const Start&) const = default;
};

struct Stop {  // stop the workers of `attempt`; STOPPED answers
  std::uint32_t attempt = 0;
  Message to_message() const;
  static Result<Stop> from_message(const Message& m);
  bool operator==(const Stop&) const = default;
};

struct Bye {  // your workers finished (or your node is out): leave, the others go on
  Message to_message() const;
  static Result<Bye> from_message(const Message& m);
  bool operator==(const Bye&) const = default;
};

struct Done {  // the job's verdict; the connection closes after it
  Verdict verdict;
  Message to_message() const;
  static Result<Done> from_message(const Message& m);
  bool operator==(const Done&) const = default;
};

// What an authenticated agent may send, and what the coordinator may order.
using Report = std::variant<Join, Heartbeat, Fail, Hanging, Load, Stopped, Finished, Checked, Signalled>;
using Order = std::variant<Heartbeat, Start, Stop, Bye, Done, CheckCompute, CheckNetwork>;
// By verb; an unknown verb, or one of the other direction, is an error.
Result<Report> decode_report(const Message& m);
Result<Order> decode_order(const Message& m);

}  // namespace ddp::rdzv
