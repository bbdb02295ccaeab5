// The node agent, in the spirit of torchrun's elastic agent, but job-wide:
// every node's agent follows the orders of one coordinator (coordinator.hpp,
// on node 0), so all nodes start, stop and restart together. Its lifecycle
// (Rendezvous -> Running -> Stopping -> WaitOrders -> (Running ...) -> Done),
// every state and what moves it, is in lifecycle.hpp; agent.cpp feeds it the
// events and carries out what it says.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/node_plan.hpp"
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

// A TCP port free on `address` right now (standalone, like torchrun
// --standalone). 0 when none could be found.
std::uint16_t free_port(const std::string& address);

}  // namespace ddp::agent
