#include "ddp/plan/worker_env.hpp"

#include "ddp/base/cpu_list.hpp"

namespace ddp {

namespace {

std::string n(std::uint64_t v) { return std::to_string(v); }

// The variables torchrun sets for every worker: ranks, sizes, the meeting point.
void set_contract(Environment& env, const NodePlan& plan, const WorkerLayout& layout, std::uint32_t local_rank) {
  const auto rank = layout.rank_base + local_rank;
  env.set("RANK", n(rank));
  env.set("LOCAL_RANK", n(local_rank));
  env.set("WORLD_SIZE", n(layout.world_size));
  env.set("LOCAL_WORLD_SIZE", n(layout.nproc));
  env.set("GROUP_RANK", n(layout.group_rank));
  env.set("GROUP_WORLD_SIZE", n(layout.groups));
  env.set("ROLE_NAME", "default");
  env.set("ROLE_RANK", n(rank));
  env.set("ROLE_WORLD_SIZE", n(layout.world_size));
  env.set("MASTER_ADDR", layout.master_addr);
  env.set("MASTER_PORT", n(layout.master_port));
  // Lightning and torch.distributed.is_torchelastic_launched() key on the run id.
  env.set("TORCHELASTIC_RUN_ID", plan.run_id);
  env.set("TORCHELASTIC_RESTART_COUNT", n(layout.restart_count));
  env.set("TORCHELASTIC_MAX_RESTARTS", n(plan.max_restarts));
  // Worker rank 0 hosts the TCPStore on MASTER_PORT itself; the agent never
  // listens there.
  env.set("TORCHELASTIC_USE_AGENT_STORE", "False");
}

}  // namespace

WorkerLayout planned_layout(const NodePlan& plan) {
  return WorkerLayout{0, plan.nproc, plan.rank_base, plan.world_size, plan.group_rank, plan.groups, {},
                      plan.master_addr, plan.master_port};
}

Environment worker_environment(const Environment& base, const NodePlan& plan, const WorkerLayout& layout,
                               std::uint32_t local_rank, const std::string& socket_ifname) {
  Environment env = base;
  env.unset_prefix(kPlanPrefix);
  set_contract(env, plan, layout, local_rank);
  env.set_default("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
  const WorkerPlacement* place = local_rank < plan.placements.size() ? &plan.placements[local_rank] : nullptr;
  if (place && !place->cpus.empty()) {
    // As many threads as the worker has CPUs; torchrun's 1 would leave them idle.
    const auto cpus = parse_cpu_list(place->cpus);
    if (cpus && !cpus->empty()) env.set_default("OMP_NUM_THREADS", std::to_string(cpus->size()));
  } else if (layout.nproc > 1) {
    env.set_default("OMP_NUM_THREADS", "1");  // torchrun's rule when workers share a node unbound
  }
  if (plan.mode == Mode::Gpu) {
    // CUDA's default order is fastest-first; Slurm's indices follow PCI order.
    env.set_default("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  }
  if (place && plan.export_ib_hca && !place->nic.empty()) env.set_default("NCCL_IB_HCA", "=" + place->nic);
  // Gloo and NCCL's bootstrap otherwise pick the address the hostname resolves
  // to, which on multi-homed nodes (and on our netns test cluster) is not the
  // one peers can reach.
  if (!socket_ifname.empty()) {
    env.set_default("GLOO_SOCKET_IFNAME", socket_ifname);
    env.set_default("NCCL_SOCKET_IFNAME", "=" + socket_ifname);
  }
  return env;
}

std::string slurm_tasks_per_node(const std::vector<std::uint32_t>& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size();) {
    std::size_t run = 1;
    while (i + run < counts.size() && counts[i + run] == counts[i]) ++run;
    if (!out.empty()) out += ",";
    out += std::to_string(counts[i]);
    if (run > 1) out += "(x" + std::to_string(run) + ")";
    i += run;
  }
  return out;
}

void apply_slurm_worker_view(Environment& env, const WorkerLayout& layout, std::uint32_t local_rank) {
  env.set("SLURM_PROCID", n(layout.rank_base + local_rank));
  env.set("SLURM_LOCALID", n(local_rank));
  for (const char* name : {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS"}) env.set(name, n(layout.world_size));
  env.set("SLURM_NTASKS_PER_NODE", n(layout.nproc));
  // The node's place among the nodes that run workers: Slurm's own unless a
  // spare took a lost node's group (--ddp-spares), as Lightning and others
  // read the node rank from SLURM_NODEID.
  env.set("SLURM_NODEID", n(layout.group_rank));
  for (const char* name : {"SLURM_NNODES", "SLURM_STEP_NUM_NODES"}) env.set(name, n(layout.groups));
  const auto per_node = slurm_tasks_per_node(layout.workers_per_group);
  env.set("SLURM_TASKS_PER_NODE", per_node);
  env.set("SLURM_STEP_TASKS_PER_NODE", per_node);
  std::string gtids;
  for (std::uint32_t i = 0; i < layout.nproc; ++i) gtids += (i ? "," : "") + n(layout.rank_base + i);
  env.set("SLURM_GTIDS", gtids);
  for (const char* prefix : {"PMI_", "PMIX_", "SLURM_PMIX_"}) env.unset_prefix(prefix);
}

}  // namespace ddp
