// NodePlan: everything one node's agent needs to start its workers, worked out
// by the SPANK plugin on the compute node (plan/step_plan.hpp) and handed to
// ddp-agent through DDP_PLAN_* environment variables: the agent's contract
// with the plugin, written and read here: each field travels as one
// DDP_PLAN_<NAME> variable, named in one table (node_plan.cpp: kFields) with
// its form and bounds. The standalone agent builds the
// same plan from its command line. What the agent runs is this plan; what
// changes per attempt (ranks after a spare took over, MASTER_PORT) comes with
// the rendezvous' START and lives in the agent's attempt, not here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/environment.hpp"
#include "ddp/base/mode.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/base/result.hpp"
#include "ddp/wire/placement.hpp"

namespace ddp {

inline constexpr int kPlanVersion = 5;
inline constexpr std::string_view kPlanPrefix = "DDP_PLAN_";

// --ddp-stragglers: what node 0 does with a node named a straggler.
enum class StragglerAction : std::uint32_t {
  Report = 0,  // say so, and go on
  Swap = 1,    // take it out: a spare takes its place and every worker restarts, or the job stops
  Off = 2,     // do not watch
};
// "report", "swap", "off", and back.
const char* straggler_action_name(StragglerAction action);
std::optional<StragglerAction> straggler_action_from(std::string_view name);

// --ddp-preflight: the checks before attempt 0 (agent/job/preflight.hpp).
enum class PreflightAction : std::uint32_t {
  Off = 0,    // none (the default)
  Check = 1,  // name a node far off the others, and go on
  Swap = 2,   // take it out: a spare takes its place before any worker starts, or the job stops
};
// "off", "check", "swap", and back.
const char* preflight_action_name(PreflightAction action);
std::optional<PreflightAction> preflight_action_from(std::string_view name);

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
  bool master_port_fixed = false;  // --ddp-port: every attempt uses it; else derived per attempt
  std::uint32_t job_id = 0;        // with step_id and port_range: derive_port (plan/ports.hpp), later attempts
  std::uint32_t step_id = 0;
  std::uint32_t array_job_id = 0;   // an array task's array id, else 0 (scontrol_job_name)
  std::uint32_t array_task_id = 0;
  PortRange port_range{20000, 29999};
  std::uint16_t rdzv_port = 0;                // where the search for the agents' rendezvous on node 0 starts (ports.hpp)
  std::string master_interface;               // node 0's agent sets MASTER_ADDR to its address here ("" = NodeAddr)
  std::uint32_t rdzv_timeout_ms = 60000;      // every node must arrive within this
  std::uint32_t heartbeat_timeout_ms = 5000;  // a silent node is declared lost after this
  std::uint32_t max_restarts = 0;
  std::uint32_t stop_grace_ms = 5000;  // SIGTERM -> SIGKILL grace when stopping workers
  bool verbose = false;
  bool export_ib_hca = false;               // NCCL_IB_HCA = each worker's closest NIC
  bool requeue = false;                     // --ddp-requeue: node 0 requeues the job after Slurm's warning
  std::uint32_t requeue_wait_ms = 60000;    // ... once every worker has ended, or after this long
  bool job_comment = true;                  // node 0 writes a failed step's verdict into the job's Comment
  std::uint32_t hang_timeout_ms = 0;        // a worker without progress this long is a hang (0: off)
  std::uint32_t spares = 0;                 // --ddp-spares: the step's last K nodes wait (plan/roster.hpp)
  std::uint32_t min_nodes = 0;              // --ddp-min-nodes: the fewest groups to go on with (0: no shrinking)
  StragglerAction stragglers = StragglerAction::Report;  // --ddp-stragglers (agent/job/straggler.hpp)
  PreflightAction preflight = PreflightAction::Off;       // --ddp-preflight (agent/job/preflight.hpp)
  // GROUP_RANK and GROUP_WORLD_SIZE: node_rank and nnodes - spares at first (a
  // spare's group_rank means nothing until a START gives it a group).
  std::uint32_t group_rank = 0;
  std::uint32_t groups = 1;
  std::string health_check;                      // the site's HealthCheck: run after a worker failure ("" = none)
  std::uint32_t health_check_timeout_ms = 60000;  // ... and failed when it takes longer
  // Node 0, when the site has a BadNodeHook: the FIFO the plugin reads the
  // bad nodes from when the step ends (ddp/wire/bad_node_report.hpp); "" = none.
  std::string bad_node_report;
  std::vector<WorkerPlacement> placements;  // empty, or one per local worker

  bool operator==(const NodePlan&) const = default;
};

// Writes/reads the DDP_PLAN_* variables. read_plan() checks the version so a
// plugin and an agent from different releases fail with a message, not a guess.
void write_plan(const NodePlan& plan, Environment& env);
Result<NodePlan> read_plan(const Environment& env);

// The job as scontrol names it: JOBID, or ARRAYJOBID_TASKID for a task of a
// job array (the first task's JOBID is the array's id, which names them all).
std::string scontrol_job_name(const NodePlan& plan);

}  // namespace ddp
