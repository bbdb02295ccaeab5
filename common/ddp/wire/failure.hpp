// What went wrong in a run, as data from the moment it is seen to the line
// the user reads, and its kind's name on the wire (FAIL and DONE carry it:
// rdzv_messages.hpp). Its life, and the file of each step:
//
//   seen       a node's agent reaps a failed worker, finds a hang, or cannot
//              start its workers, and makes a Failure  agent/node/workers/worker_failure.cpp
//   classed    by the node that saw it                  common/ddp/wire/failure_class.cpp
//   reported   FAIL carries it to node 0                agent/rendezvous/rdzv_client.cpp
//   decided    node 0 keeps the attempt's first failure, restarts or ends the
//              run (the restart rule)                   agent/job/job.cpp
//   printed    node 0's agent prints the verdict's root cause
//                                                       agent/node/agent.cpp, agent/job/failure_text.cpp
//
// Nothing is turned into prose before agent/job/failure_text.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/failure_class.hpp"

namespace ddp {

enum class FailureKind {
  WorkerExited,    // a worker exited with a code other than 0, or a signal killed it
  StartFailed,     // a node could not start its workers
  Hung,            // a worker made no progress for --ddp-hang-timeout
  HangUnreported,  // a node noticed a hang but its report never came
  NodeLost,        // a node's heartbeats stopped or its connection ended
  NodeUnhealthy,   // the site's HealthCheck failed on a node after a worker failure
  AgentSignalled,  // a node's agent got a terminating signal: Slurm stops the job or step (`signal`)
  Setup,           // the step cannot begin or go on; `detail` says why and the fix
};
// The kind's name on the wire and in logs ("worker_exited"), and back.
const char* kind_name(FailureKind kind);
std::optional<FailureKind> kind_from_name(std::string_view name);

// Where a stalled worker was when SIGABRT came, read from its stack dump;
// the order is the order of suspicion (agent/node/duties/hang_rule.hpp).
enum class StalledIn { elsewhere = 0, unknown = 1, collective = 2 };

// A hang (--ddp-hang-timeout), as the node that saw it knows it.
struct HangFacts {
  std::uint32_t timeout_ms = 0;
  std::uint64_t since_ms = 1;              // the culprit's last progress, ms since the epoch
  StalledIn where = StalledIn::unknown;    // the culprit's
  std::optional<std::uint64_t> step;       // the step in its DDP_PROGRESS_FILE
  bool never = false;                      // it never signalled progress
  std::vector<std::uint32_t> stalled;      // global ranks on its node, in order of suspicion
  std::vector<std::uint32_t> progressing;  // global ranks on its node still making progress
  bool survived_abort = false;             // still running when the report went
  bool operator==(const HangFacts&) const = default;
};

// Who (node, rank), when (attempt, time), how (kind, code, signal, what it
// said) and its class (failure_class.hpp: out of memory, a CUDA/NCCL error, a
// crash, the script's exception...), which decides whether to retry and
// whom to blame.
struct Failure {
  FailureKind kind = FailureKind::WorkerExited;
  std::uint32_t attempt = 0;
  bool at_rendezvous = false;  // before the step began (no attempt yet)
  std::uint32_t node = 0;
  std::string host, addr;  // the node's, as it joined
  std::optional<std::uint32_t> rank, local_rank;
  std::string time;   // HH:MM:SS, the clock of the node that saw it
  int exit_code = 1;  // what the job exits with: a worker's status (128 + signal when killed); 1 otherwise
  int signal = 0;     // WorkerExited: the signal that killed it; AgentSignalled: the agent's
  std::string detail;       // StartFailed: the error; NodeLost, NodeUnhealthy: why; Setup: the message
  std::string consequence;  // NodeLost, NodeUnhealthy: what it changed in the step (plan/roster.hpp's words)
  std::string stderr_tail;  // its last lines (a hang: its stack dump), a few KiB at most
  std::string error_file;   // TORCHELASTIC_ERROR_FILE, when the worker wrote it
  std::optional<HangFacts> hang;
  std::optional<FailureClass> cls;  // as its node classed it; class_of() when unset
  bool operator==(const Failure&) const = default;
};

// Another node's stalled ranks, beside a hang's culprit.
struct StalledNode {
  std::uint32_t node = 0;
  std::vector<std::uint32_t> ranks;
  bool operator==(const StalledNode&) const = default;
};

// Why the job failed: the failure to blame and what goes with it.
struct RootCause {
  Failure failure;
  std::uint32_t attempts = 1;              // the run's attempts at most (--ddp-restarts + 1)
  std::vector<StalledNode> also_stalled;   // Hung: the other nodes' stalled ranks, waiting for the culprit
  // NodeUnhealthy: the node's own failure that ran its HealthCheck; NodeLost:
  // the failure seen before the loss was noticed (most likely its consequence).
  std::optional<Failure> related;
  std::optional<std::uint32_t> restarts_exhausted;  // no restart left (--ddp-restarts=N) to go on after a loss
  std::vector<std::string> left;                    // nodes that had finished and left, so no restart
  bool operator==(const RootCause&) const = default;
};

// The job's verdict: success, or its root cause.
struct Verdict {
  std::optional<RootCause> cause;
  int exit_code() const { return cause ? cause->failure.exit_code : 0; }
  bool operator==(const Verdict&) const = default;
};

}  // namespace ddp
