// The node agent's state machine, in the spirit of torchrun's elastic agent:
//
//   Rendezvous -> Start -> Monitor -> Stop -> (Restart -> Start ...) -> Done
//
// Rendezvous: agree on ranks and MASTER_*; in this release the plan fixes them
//   (the plugin's plan under Slurm, the command line standalone).
// Start:   one process per local worker, with torchrun's environment contract.
// Monitor: wait for workers to end and for signals; forward signals.
// Stop:    on a failure or a terminating signal: SIGTERM, grace, SIGKILL.
// Restart: a new attempt on a fresh MASTER_PORT, while restarts remain.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ddp/plan.hpp"

namespace ddp::agent {

struct AgentConfig {
  NodePlan plan;
  std::vector<std::string> command;  // the worker command line
  std::chrono::milliseconds grace{5000};
  bool standalone = false;  // pick MASTER_PORT ourselves on each attempt
};

// Runs the workers to the end; returns the agent's exit code: 0, or the first
// failed worker's code (128 + signal when killed), or 128 + the signal that
// stopped the agent.
int run_agent(AgentConfig config);

// A TCP port free on `address` right now (standalone mode, like torchrun
// --standalone). 0 when none could be found.
std::uint16_t free_port(const std::string& address);

}  // namespace ddp::agent
