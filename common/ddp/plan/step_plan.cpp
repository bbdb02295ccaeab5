#include "ddp/plan/step_plan.hpp"

#include "ddp/base/cpu_list.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/plan/ports.hpp"
#include "ddp/plan/roster.hpp"
#include "ddp/plan/workers.hpp"

namespace ddp {

Shape step_shape(bool batch_script, std::uint32_t total_tasks, std::size_t nodes) {
  if (batch_script) return Shape::Batch;
  return total_tasks > nodes ? Shape::Task : Shape::Agent;
}

Status check_step_command(const StepFacts& facts) {
  const bool task_shape = facts.shape == Shape::Task;
  // A launcher as the command (agent shape) or LOCAL_RANK set: the same on
  // every node, so said once.
  if (auto ok = check_not_a_launcher(task_shape ? std::vector<std::string>{} : facts.argv, facts.local_rank_set); !ok)
    return ok;
  return check_no_container_plugin(facts.container, task_shape);
}

Status check_options_for_shape(const StepFacts& facts, const DdpRequest& request) {
  if (facts.shape != Shape::Task) return Ok{};
  const auto refuse = [](const std::string& option, const std::string& what) {
    return fail(option + " needs one task per node (" + what +
                "), but this step runs several tasks per node, each task one worker; drop --ntasks-per-node (or "
                "-n) and set the workers per node with --ddp-procs=N or --ddp-gpus=N");
  };
  if (request.restarts > 0) return refuse("--ddp-restarts", "the agent restarts the workers");
  if (request.hang_timeout_s.value_or(0) > 0) return refuse("--ddp-hang-timeout", "the agent watches the workers");
  if (request.requeue.value_or(false)) return refuse("--ddp-requeue", "the agent requeues the job");
  if (request.stragglers.value_or(StragglerAction::Report) == StragglerAction::Swap)
    return refuse("--ddp-stragglers=swap", "the agents watch the workers and swap a node");
  if (request.preflight.value_or(PreflightAction::Off) != PreflightAction::Off)
    return refuse("--ddp-preflight", "the agents run the checks before the workers");
  return Ok{};
}

std::uint16_t first_master_port(const DdpRequest& request, const Settings& settings, const StepFacts& facts) {
  return request.port.value_or(derive_port(settings.port_range, facts.job_id, facts.step_id, 0));
}

std::uint16_t rdzv_port_for(PortRange range, std::uint32_t job_id, std::uint32_t step_id,
                            std::uint16_t master_port) {
  const auto port = derive_rdzv_port(range, job_id, step_id);
  if (port != master_port) return port;
  return derive_port(range, job_id, step_id, 0);  // --ddp-port chose the rendezvous slot's port
}

namespace {

const std::string kNoMasterAddr = "node 0's address was not looked up (internal error; please report it)";

// The batch script's plan (node 0 of the job): MASTER_ADDR/PORT for launches
// written by hand.
Result<StepPlan> plan_batch(const StepFacts& facts, const Settings& settings, const DdpRequest& request,
                            const std::string& master_addr) {
  if (master_addr.empty()) return fail(kNoMasterAddr);
  StepPlan out;
  out.shape = Shape::Batch;
  NodePlan& plan = out.node;
  plan.run_id = std::to_string(facts.job_id) + ".batch";
  plan.nnodes = std::uint32_t(facts.nodes.size());
  plan.groups = plan.nnodes;
  plan.master_addr = master_addr;
  plan.master_port = first_master_port(request, settings, facts);
  // Workers per node as --ddp would choose them on this node; unknown (0) when
  // the batch node alone cannot say (e.g. --ddp=gpu on a node without GPUs).
  const auto workers = resolve_workers(request, std::uint32_t(facts.step_gpus.size()), facts.node());
  plan.nproc = workers ? workers->nproc : 0;
  plan.mode = workers ? workers->mode : Mode::Cpu;
  plan.verbose = request.verbose;
  return out;
}

// Ranks: this node's rank base and the world size, spares holding none.
// Task shape: Slurm's tasks per node, heterogeneous or not. Agent shape:
// every node runs the same count until the agents' rendezvous can exchange
// counts (CPU mode and --ddp-gpus are homogeneous by construction).
Status place_ranks(NodePlan& plan, const StepFacts& facts, const DdpRequest& request) {
  const bool task_shape = facts.shape == Shape::Task;
  if (auto ok = check_membership(request.spares, request.min_nodes, plan.nnodes, task_shape); !ok)
    return fail(ok.error());
  // Spares (--ddp-spares, the last K nodes) hold no ranks until the
  // rendezvous gives one of them a lost node's group.
  const std::uint32_t groups = plan.nnodes - request.spares;
  const bool spare = plan.node_rank >= groups;
  const auto per_node = task_shape ? facts.tasks_per_node : std::vector<std::uint32_t>(groups, plan.nproc);
  const auto layout = rank_layout(per_node, spare ? 0 : plan.node_rank);
  if (!layout) return fail(layout.error());
  plan.rank_base = spare ? 0 : layout->rank_base;
  plan.world_size = layout->world_size;
  plan.spares = request.spares;
  plan.groups = groups;
  plan.min_nodes = request.min_nodes.value_or(0);
  plan.stragglers = request.stragglers.value_or(StragglerAction::Report);
  plan.group_rank = plan.node_rank;
  return Ok{};
}

// MASTER_PORT (the user's --ddp-port, fixed for every attempt, or derived per
// attempt inside the site's range) and the agents' rendezvous port.
void choose_ports(NodePlan& plan, const StepFacts& facts, const Settings& settings, const DdpRequest& request) {
  plan.job_id = facts.job_id;
  plan.step_id = facts.step_id;
  plan.array_job_id = facts.array_job_id;
  plan.array_task_id = facts.array_task_id;
  plan.port_range = settings.port_range;
  plan.master_port = first_master_port(request, settings, facts);
  plan.master_port_fixed = request.port.has_value();
  plan.rdzv_port = rdzv_port_for(settings.port_range, facts.job_id, facts.step_id, plan.master_port);
}

// Timeouts and switches: the site's settings, where the user's options win.
// After place_ranks (the restart budget counts the spares and groups it set).
void copy_settings(NodePlan& plan, const StepFacts& facts, const Settings& settings, const DdpRequest& request) {
  plan.master_interface = facts.shape == Shape::Task ? "" : settings.master_interface;
  plan.rdzv_timeout_ms = std::uint32_t(settings.rdzv_timeout.count());
  plan.heartbeat_timeout_ms = std::uint32_t(settings.heartbeat_timeout.count());
  plan.health_check = settings.health_check;
  plan.health_check_timeout_ms = std::uint32_t(settings.health_check_timeout.count());
  // A lost node taken over by a spare, or dropped, restarts every worker and
  // counts against --ddp-restarts like any failure; left at 0, the budget is
  // the number of nodes that may be lost.
  plan.max_restarts = request.restarts;
  if (plan.max_restarts == 0 && (plan.spares > 0 || plan.min_nodes > 0))
    plan.max_restarts = plan.spares + (plan.min_nodes > 0 ? plan.groups - plan.min_nodes : 0);
  plan.stop_grace_ms = std::uint32_t(settings.stop_grace.value_or(stop_grace_for(facts.kill_wait)).count());
  plan.verbose = request.verbose;
  plan.export_ib_hca = settings.export_ib_hca;
  // --ddp-requeue, or the site's default when the user said nothing (SDDP_REQUEUE=0 says no).
  plan.requeue = request.requeue.value_or(settings.requeue);
  plan.requeue_wait_ms = std::uint32_t(settings.requeue_wait.count());
  plan.job_comment = settings.job_comment;
  plan.hang_timeout_ms =
      request.hang_timeout_s ? *request.hang_timeout_s * 1000u : std::uint32_t(settings.hang_timeout.count());
  plan.preflight = request.preflight.value_or(settings.preflight);
}

// The step-wide plan of the agent and task shapes: ranks, MASTER_*,
// placements. Node-specific errors (GPU counts) name the node; the rest are
// the same everywhere.
Result<StepPlan> plan_workers(const StepFacts& facts, const Settings& settings, const DdpRequest& request,
                              const std::string& master_addr, const NodeHardware& hardware) {
  const bool task_shape = facts.shape == Shape::Task;
  // Task shape: each task is one worker, so Slurm's task count is the count.
  const auto gpus = std::uint32_t(facts.step_gpus.size());
  const auto workers = task_shape ? resolve_task_workers(request, gpus, facts.local_tasks, facts.node())
                                  : resolve_workers(request, gpus, facts.node());
  if (!workers) return fail(workers.error());
  if (master_addr.empty()) return fail(kNoMasterAddr);

  StepPlan out;
  out.shape = facts.shape;
  NodePlan& plan = out.node;
  plan.run_id = std::to_string(facts.job_id) + "." + std::to_string(facts.step_id);
  plan.mode = workers->mode;
  plan.node_rank = facts.node_id;
  plan.nnodes = std::uint32_t(facts.nodes.size());
  plan.nproc = workers->nproc;
  plan.master_addr = master_addr;
  if (auto ok = place_ranks(plan, facts, request); !ok) return fail(ok.error());
  choose_ports(plan, facts, settings, request);
  copy_settings(plan, facts, settings, request);
  plan.placements = place_workers(settings, plan, facts, hardware, out.warnings);
  return out;
}

// GPU mode: the bus id of each worker's GPU (worker i uses the i-th GPU of the
// step). Slurm names GPUs by /dev/nvidiaN minor; hwloc by PCI bus id. A GPU
// whose minor is not in the driver's files keeps an "unknown:" id, which the
// binding plan leaves unbound.
std::vector<std::string> gpu_bus_ids(const Settings& settings, const NodePlan& plan, const StepFacts& facts,
                                     const NodeHardware& hardware, const std::string& node,
                                     std::vector<std::string>& warnings) {
  const auto& minors = hardware.gpu_minors;
  if (!minors) warnings.push_back(node + minors.error());
  std::vector<std::string> bus_ids;
  for (std::uint32_t i = 0; i < plan.nproc && i < facts.step_gpus.size(); ++i) {
    const auto minor = parse_uint(facts.step_gpus[i], 0, 1u << 20, "SLURM_STEP_GPUS");
    const auto it =
        minor && minors ? minors->find(unsigned(*minor)) : std::map<unsigned, std::string>::const_iterator{};
    if (!minor || !minors || it == minors->end()) {
      warnings.push_back(node + "GPU " + facts.step_gpus[i] + " (/dev/nvidia" + facts.step_gpus[i] + ") is not in " +
                         settings.gpu_info_dir + ", so its PCI address is unknown: worker " + std::to_string(i) +
                         " runs unbound (check the NVIDIA driver, or GpuInfoDir= in the site config)");
      bus_ids.push_back("unknown:" + facts.step_gpus[i]);
    } else {
      bus_ids.push_back(it->second);
    }
  }
  return bus_ids;
}

// Worker i's entry of CUDA_VISIBLE_DEVICES: an index, or a GPU-/MIG- UUID.
// An entry with '|' or ';' is none of those (CUDA would see no device) and
// would not fit the placements' text form (wire/placement.hpp): left out, and said.
std::string worker_gpu(const StepFacts& facts, std::uint32_t i, const std::string& node,
                       std::vector<std::string>& warnings) {
  if (i >= facts.visible_gpus.size()) return std::to_string(i);
  const auto& entry = facts.visible_gpus[i];
  if (entry.find_first_of("|;") == std::string::npos) return entry;
  warnings.push_back(node + "CUDA_VISIBLE_DEVICES entry '" + printable(entry, 100) +
                     "' is not a GPU index or UUID: worker " + std::to_string(i) +
                     " keeps the step's CUDA_VISIBLE_DEVICES");
  return "";
}

}  // namespace

std::vector<WorkerPlacement> place_workers(const Settings& settings, const NodePlan& plan, const StepFacts& facts,
                                           const NodeHardware& hardware, std::vector<std::string>& warnings) {
  const std::string node = "node " + facts.node() + ": ";
  const auto& topo = hardware.topology;
  if (!topo) {
    warnings.push_back(node + "workers run unbound: " + topo.error());
    return {};
  }
  BindingPlan binding;
  std::vector<WorkerPlacement> placements(plan.nproc);
  if (plan.mode == Mode::Gpu) {
    binding = plan_gpu_binding(*topo, gpu_bus_ids(settings, plan, facts, hardware, node, warnings), {});
    // Worker i uses the i-th GPU of the step; cuda:LOCAL_RANK is that GPU
    // because CUDA_VISIBLE_DEVICES keeps Slurm's order.
    for (std::uint32_t i = 0; i < plan.nproc; ++i)
      placements[i].gpu = worker_gpu(facts, i, node, warnings);
  } else {
    binding = plan_cpu_binding(*topo, plan.nproc, {});
  }
  for (const auto& w : binding.warnings) warnings.push_back(node + w);
  for (std::size_t i = 0; i < placements.size() && i < binding.workers.size(); ++i) {
    const auto& b = binding.workers[i];
    if (b.gpu_bus_id.rfind("unknown:", 0) != 0) placements[i].gpu_bus_id = b.gpu_bus_id;
    if (settings.bind_cpus) placements[i].cpus = cpu_list(b.cpus);
    placements[i].nic = b.nic;
  }
  return placements;
}

Result<StepPlan> plan_step(const StepFacts& facts, const Settings& settings, const DdpRequest& request,
                           const std::string& master_addr, const NodeHardware& hardware) {
  switch (facts.shape) {
    case Shape::Batch:
      return plan_batch(facts, settings, request, master_addr);
    case Shape::Agent:
    case Shape::Task:
      return plan_workers(facts, settings, request, master_addr, hardware);
    case Shape::None:
      break;
  }
  return fail("no plan for a step of no shape (internal error; please report it)");
}

}  // namespace ddp
