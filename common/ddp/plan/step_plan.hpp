// Planning one --ddp step on one node, pure: what Slurm said about the step
// (StepFacts), the site's settings for this node, the user's request and node
// 0's address go in; this node's plan comes out, or the refusal with its fix.
// The plugin (spank/slurmstepd.cpp) gathers those inputs from Slurm,
// slurmctld, hwloc and the environment, calls plan_step(), and applies the
// result (environment, agent launch); every decision is made here, so every
// decision has a unit test (tests/unit/test_step_plan.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "ddp/plan/binding.hpp"
#include "ddp/plan/request.hpp"
#include "ddp/site/site_config.hpp"
#include "ddp/wire/node_plan.hpp"
#include "ddp/wire/placement.hpp"

namespace ddp {

// The step's shape: what the plugin does for this step on this node. (The
// mode is something else: GPU or CPU workers, in either shape.)
enum class Shape {
  None,   // not a DDP step (or the extern/interactive step)
  Agent,  // one task per node: exec ddp-agent, which starts the workers
  Task,   // several tasks per node: each task is one worker
  Batch,  // the batch script (node 0 only): export MASTER_* for hand-written launches
};

// The shape, decided once (gather_step_facts stores it in StepFacts): the batch
// script; a step with more tasks than nodes runs one worker per task; any other
// step one agent per node.
Shape step_shape(bool batch_script, std::uint32_t total_tasks, std::size_t nodes);

// What Slurm tells the plugin about the step on this node (ids, nodes, tasks,
// GPUs, the command), as values. Gathered once in user_init (spank/step.cpp);
// everything after works on these values.
struct StepFacts {
  std::uint32_t job_id = 0;
  std::uint32_t step_id = 0;
  std::uint32_t array_job_id = 0;   // a job array's task: the array's id (0: not an array task)
  std::uint32_t array_task_id = 0;  // ... and the task's index in it
  std::uint32_t node_id = 0;       // this node's index in the step
  std::vector<std::string> nodes;  // the step's nodes, in node-rank order
  std::string partition;
  Shape shape = Shape::None;  // step_shape(); a plan for None is refused
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

// The checks on the step's command that are the same on every node: no second
// launcher as the command (agent shape), LOCAL_RANK not already set (either
// shape), no container plugin's request (agent shape); see
// check_not_a_launcher and check_no_container_plugin (request.hpp).
Status check_step_command(const StepFacts& facts);

// The options only the agent implements (--ddp-restarts, --ddp-hang-timeout,
// --ddp-requeue), asked for by the user in the task shape, where no agent
// runs: refused with the fix rather than accepted and ignored. (--ddp-spares
// and --ddp-min-nodes: check_membership, roster.hpp. The site's defaults are
// no request and stay quiet.) The same on every node.
Status check_options_for_shape(const StepFacts& facts, const DdpRequest& request);

// The node's hardware as the placement needs it, loaded by the plugin (hwloc:
// node/topology.hpp) before planning. GPU minors are used in GPU mode only.
struct NodeHardware {
  Result<Topology> topology = fail("the node's topology was not loaded");
  Result<std::map<unsigned, std::string>> gpu_minors = std::map<unsigned, std::string>{};  // /dev/nvidiaN -> bus id
};

// Where each local worker of `plan` runs (GPU, CPUs, NIC), from the node's
// hardware. Problems (a topology hwloc could not load, a GPU the topology does
// not show) go to `warnings`, each naming the node: the worker runs unbound
// and the user is told why. One placement per worker, or none.
std::vector<WorkerPlacement> place_workers(const Settings& settings, const NodePlan& plan, const StepFacts& facts,
                                           const NodeHardware& hardware, std::vector<std::string>& warnings);

// This node's part of a step, ready to apply.
struct StepPlan {
  Shape shape = Shape::None;
  NodePlan node;                      // batch shape: MASTER_*, DDP_NNODES, DDP_NPROC_PER_NODE only
  std::vector<std::string> warnings;  // said once per node from task_init
};

// The plan of this node: ranks (heterogeneous task counts included), spares and
// groups, MASTER_PORT and the rendezvous port, placements, and the timeouts
// and switches of the site's settings. `master_addr`: node 0's address, ""
// when it was not looked up. Agent and task shapes place the workers on
// `hardware`; the batch shape ignores it. Errors name the fix; those about GPU
// counts name the node.
Result<StepPlan> plan_step(const StepFacts& facts, const Settings& settings, const DdpRequest& request,
                           const std::string& master_addr, const NodeHardware& hardware);

// MASTER_PORT of attempt 0: the user's --ddp-port, else where node 0's search
// starts (derived from the step; ports.hpp).
std::uint16_t first_master_port(const DdpRequest& request, const Settings& settings, const StepFacts& facts);

// Where the search for the agents' rendezvous port on node 0 starts (node 0
// claims the first free one: ports.hpp): slot 0 of the step (derive_rdzv_port),
// unless --ddp-port chose that very port for MASTER_PORT; then the step's slot
// 1, attempt 0's derived MASTER_PORT, which no attempt uses when --ddp-port
// fixes MASTER_PORT. Slots 0 and 1 are neighbours, so it differs from
// `master_port` in any PortRange of 2 ports or more.
std::uint16_t rdzv_port_for(PortRange range, std::uint32_t job_id, std::uint32_t step_id,
                            std::uint16_t master_port);

}  // namespace ddp
