// What Slurm tells the plugin about the step on this node (remote context):
// ids, nodes, tasks, GPUs, the command. Gathered once in user_init; everything
// after works on these values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/result.hpp"
#include "hostlist.hpp"
#include "slurm.hpp"

namespace ddp::spank {

struct StepFacts {
  std::uint32_t job_id = 0;
  std::uint32_t step_id = 0;
  std::uint32_t node_id = 0;       // this node's index in the step
  std::vector<std::string> nodes;  // the step's nodes, in node-rank order
  std::string partition;
  std::vector<std::uint32_t> tasks_per_node;
  std::uint32_t local_tasks = 1;
  std::uint32_t total_tasks = 1;
  std::vector<std::string> step_gpus;     // SLURM_STEP_GPUS (batch: SLURM_JOB_GPUS): /dev/nvidiaN minors
  std::vector<std::string> visible_gpus;  // CUDA_VISIBLE_DEVICES as Slurm set it (may be renumbered)
  std::vector<std::string> argv;          // the step's command line
  bool local_rank_set = false;            // LOCAL_RANK already in the step's environment
  std::string container;                  // a container plugin's request (pyxis), as given; empty if none
  std::optional<std::chrono::seconds> kill_wait;  // Slurm's KillWait, as srun read it (SLURM_DDP_KILL_WAIT)

  const std::string& node() const { return nodes[node_id]; }
};

bool is_batch_step(std::uint32_t step_id);
bool is_launched_step(std::uint32_t step_id);  // a real srun step (not batch/extern/interactive)

std::optional<std::string> job_getenv(spank_t sp, const char* name);
Result<std::uint32_t> step_id(spank_t sp);
Result<StepFacts> gather_step_facts(spank_t sp);

// NodeAddr of a node, from slurmctld's node table.
Result<std::string> node_address(const std::string& node);

}  // namespace ddp::spank
