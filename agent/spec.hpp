// What one node's agent runs, fixed for the whole run: the plan the plugin
// wrote (or the standalone command line's), the workers' command and how
// their output is passed on. What changes from attempt to attempt (ranks,
// MASTER_PORT) is the Attempt's (workers/attempt.hpp): torchrun's WorkerSpec
// against its WorkerGroup.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/node_plan.hpp"
#include "node/workers/output.hpp"

namespace ddp::agent {

struct AgentSpec {
  NodePlan plan;
  std::vector<std::string> command;  // the worker command line
  std::chrono::milliseconds grace{5000};
  bool standalone = false;  // one machine: coordinator on loopback, MASTER_PORT chosen free per attempt
  std::string secret;       // the step's rendezvous secret (standalone: made up here)
  OutputOptions output;
  bool one_gpu_per_worker = false;       // CUDA_VISIBLE_DEVICES = the worker's own GPU only
  std::optional<rlimit> workers_nofile;  // the open-files limit the workers get (ddp::raise_open_files_limit)
};

}  // namespace ddp::agent
