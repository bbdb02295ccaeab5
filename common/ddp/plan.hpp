// NodePlan: everything one node's agent needs to start its workers, worked out
// by the SPANK plugin on the compute node and handed to ddp-agent through
// DDP_PLAN_* environment variables (the agent's contract with the plugin). The
// standalone agent builds the same plan from its command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/environment.hpp"
#include "ddp/parse.hpp"
#include "ddp/placement.hpp"
#include "ddp/request.hpp"
#include "ddp/result.hpp"

namespace ddp {

inline constexpr int kPlanVersion = 5;
inline constexpr std::string_view kPlanPrefix = "DDP_PLAN_";

struct NodePlan {
  std::string run_id;           // the same on every node: "JOBID.STEPID" under Slurm
  Mode mode = Mode::Cpu;        // resolved: Gpu or Cpu
  std::uint32_t node_rank = 0;  // index of this node in the step's node list
  std::uint32_t nnodes = 1;
  std::uint32_t nproc = 1;         // workers on this node
  std::uint32_t rank_base = 0;     // global rank of this node's local rank 0
  std::uint32_t world_size = 1;    // workers on all nodes
  std::string master_addr;         // address of node 0, as Slurm publishes it
  std::uint16_t master_port = 0;   // attempt 0's
  bool master_port_fixed = false;  // --ddp-port: every attempt uses it; else derive_port per attempt
  std::uint32_t job_id = 0;        // with step_id and port_range: derive_port for later attempts
  std::uint32_t step_id = 0;
  PortRange port_range{20000, 29999};
  std::uint16_t rdzv_port = 0;                // the agents' rendezvous on node 0 (never MASTER_PORT)
  std::string master_interface;               // node 0's agent sets MASTER_ADDR to its address here ("" = NodeAddr)
  std::uint32_t rdzv_timeout_ms = 60000;      // every node must arrive within this
  std::uint32_t heartbeat_timeout_ms = 5000;  // a silent node is declared lost after this
  std::uint32_t max_restarts = 0;
  std::uint32_t stop_grace_ms = 5000;  // SIGTERM -> SIGKILL grace when stopping workers
  bool verbose = false;
  bool export_ib_hca = false;               // NCCL_IB_HCA = each worker's closest NIC
  bool requeue = false;                     // --ddp-requeue: node 0 requeues the job after Slurm's warning
  std::uint32_t requeue_wait_ms = 60000;    // ... once every worker has ended, or after this long
  std::uint32_t hang_timeout_ms = 0;        // a worker without progress this long is a hang (0: off)
  std::uint32_t spares = 0;                 // --ddp-spares: the step's last K nodes wait (roster.hpp)
  std::uint32_t min_nodes = 0;              // --ddp-min-nodes: the fewest groups to go on with (0: no shrinking)
  // GROUP_RANK and GROUP_WORLD_SIZE: node_rank and nnodes - spares at first (a
  // spare's group_rank means nothing until a START gives it a group).
  std::uint32_t group_rank = 0;
  std::uint32_t groups = 1;
  std::string health_check;                      // the site's HealthCheck: run after a worker failure ("" = none)
  std::uint32_t health_check_timeout_ms = 60000;  // ... and failed when it takes longer
  std::vector<WorkerPlacement> placements;  // empty, or one per local worker

  bool operator==(const NodePlan&) const = default;
};

// Global rank layout for heterogeneous nodes: base = running sum in node order.
struct RankLayout {
  std::uint32_t rank_base = 0;
  std::uint32_t world_size = 0;
};
Result<RankLayout> rank_layout(const std::vector<std::uint32_t>& workers_per_node, std::uint32_t node_rank);

// Writes/reads the DDP_PLAN_* variables. read_plan() checks the version so a
// plugin and an agent from different releases fail with a message, not a guess.
void write_plan(const NodePlan& plan, Environment& env);
Result<NodePlan> read_plan(const Environment& env);

// MASTER_PORT of a step attempt: the same on every node without talking, inside
// the site's range, spread over the range by job id so jobs sharing a node rarely
// meet, and different for different steps (and attempts) of one job as long as
// the range holds more ports than the job has steps times 64. Each step owns 64
// consecutive slots: slot 0 is its rendezvous port, slots 1..63 its attempts
// (attempt 63 reuses attempt 0's, long closed by then).
std::uint16_t derive_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t attempt);
std::uint16_t derive_rdzv_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id);
// MASTER_PORT of `attempt` for this plan (fixed, or derived).
std::uint16_t master_port_for(const NodePlan& plan, std::uint32_t attempt);

}  // namespace ddp

namespace ddp {

// How many workers this node runs and in which mode, from the request and the
// GPUs Slurm gave the step on this node (SLURM_STEP_GPUS). `node` names the node
// in messages.
struct WorkerCount {
  Mode mode = Mode::Cpu;
  std::uint32_t nproc = 1;
  bool operator==(const WorkerCount&) const = default;
};
Result<WorkerCount> resolve_workers(const DdpRequest& request, std::uint32_t step_gpus, std::string_view node);

// The same for the task shape (several Slurm tasks per node, each one worker):
// the count is Slurm's `local_tasks`; options that disagree are errors, and so
// are more workers than GPUs in GPU mode.
Result<WorkerCount> resolve_task_workers(const DdpRequest& request, std::uint32_t step_gpus, std::uint32_t local_tasks,
                                         std::string_view node);

// The task shape in GPU mode, in each task: Slurm narrows a task's
// CUDA_VISIBLE_DEVICES to its own GPU for --gpus-per-task and --gpu-bind, and
// then cuda:LOCAL_RANK does not exist for LOCAL_RANK > 0 (the script's
// torch.cuda.set_device(LOCAL_RANK) fails). Refused, on every task alike, with
// the fix; `one_gpu_per_worker` (DDP_ONE_GPU_PER_WORKER=1) says the script
// uses cuda:0, as it must when each worker sees one GPU.
Status check_task_gpu_view(std::size_t visible_gpus, std::uint32_t local_rank, std::uint32_t local_tasks,
                           bool one_gpu_per_worker);


}  // namespace ddp

namespace ddp {
// SLURM_TASKS_PER_NODE ("2(x3),1") expanded to one count per node: [2, 2, 2, 1].
Result<std::vector<std::uint32_t>> parse_tasks_per_node(std::string_view text);
}  // namespace ddp
