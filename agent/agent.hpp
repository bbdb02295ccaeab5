// The node agent's state machine, in the spirit of torchrun's elastic agent,
// but job-wide: every node's agent follows the orders of one coordinator
// (coordinator.hpp, on node 0), so all nodes start, stop and restart together.
//
//   Rendezvous -> Monitor -> Stopping -> WaitOrders -> (Monitor ...) -> Done
//
// Rendezvous: connect to the coordinator, prove the step's secret, JOIN with
//             this node's worker count; START brings ranks and MASTER_*.
// Monitor:    workers run; their output is routed (rank prefixes, log files,
//             the stderr tail); signals are forwarded. The first failure here
//             is reported (FAIL) and the node's workers are stopped at once;
//             STOP from the coordinator (a failure elsewhere, a lost node)
//             stops them too.
// Stopping:   SIGTERM sent (or the terminating signal the agent got), SIGKILL
//             at the end of the grace; the loop keeps serving meanwhile:
//             heartbeats, node 0's coordinator, the workers' output. Then
//             STOPPED to the coordinator (or Done, when the run is over).
// WaitOrders: stopped; the coordinator answers with START (a new attempt on a
//             fresh MASTER_PORT) or DONE (the verdict and the one root cause).
// Done:       exit with the verdict's code. All workers exiting 0 ends the run
//             at once (FINISHED), with no exit barrier holding the allocation.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/plan.hpp"
#include "output.hpp"

namespace ddp::agent {

struct AgentConfig {
  NodePlan plan;
  std::vector<std::string> command;  // the worker command line
  std::chrono::milliseconds grace{5000};
  bool standalone = false;  // one machine: coordinator on loopback, MASTER_PORT chosen free per attempt
  std::string secret;       // the step's rendezvous secret (standalone: made up here)
  OutputOptions output;
  bool one_gpu_per_worker = false;  // CUDA_VISIBLE_DEVICES = the worker's own GPU only
  std::optional<rlimit> workers_nofile;  // the open-files limit the workers get (ddp::raise_open_files_limit)
};

// Runs the workers to the end; returns the agent's exit code: 0, the failed
// worker's code (128 + signal when killed), 1 for a lost node or a failed
// rendezvous, or 128 + the signal that stopped the agent.
int run_agent(AgentConfig config);

// A TCP port free on `address` right now (standalone mode, like torchrun
// --standalone). 0 when none could be found.
std::uint16_t free_port(const std::string& address);

}  // namespace ddp::agent
