#include "ddp/plan/worker_env.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {
NodePlan two_by_two(std::uint32_t node) {
  NodePlan p;
  p.run_id = "9.0";
  p.node_rank = node;
  p.nnodes = 2;
  p.group_rank = node;
  p.groups = 2;
  p.nproc = 2;
  p.rank_base = node * 2;
  p.world_size = 4;
  p.master_addr = "198.18.1.10";
  p.master_port = 23456;
  return p;
}
std::string get(const Environment& e, const char* name) { return e.get(name).value_or("<unset>"); }
// Worker `local`'s environment in the plan's own layout, `restarts` attempts in.
Environment env_of(const Environment& base, const NodePlan& plan, std::uint32_t local, std::uint32_t restarts,
                   const std::string& ifname) {
  auto layout = planned_layout(plan);
  layout.restart_count = restarts;
  return worker_environment(base, plan, layout, local, ifname);
}
}  // namespace

START_TEST(torchrun_contract_variables) {
  Environment base;
  const auto env = env_of(base, two_by_two(1), 1, 0, "eth0");
  CK_STR_EQ(get(env, "RANK"), "3");
  CK_STR_EQ(get(env, "LOCAL_RANK"), "1");
  CK_STR_EQ(get(env, "WORLD_SIZE"), "4");
  CK_STR_EQ(get(env, "LOCAL_WORLD_SIZE"), "2");
  CK_STR_EQ(get(env, "GROUP_RANK"), "1");
  CK_STR_EQ(get(env, "GROUP_WORLD_SIZE"), "2");
  CK_STR_EQ(get(env, "ROLE_NAME"), "default");
  CK_STR_EQ(get(env, "ROLE_RANK"), "3");
  CK_STR_EQ(get(env, "ROLE_WORLD_SIZE"), "4");
  CK_STR_EQ(get(env, "MASTER_ADDR"), "198.18.1.10");
  CK_STR_EQ(get(env, "MASTER_PORT"), "23456");
  CK_STR_EQ(get(env, "TORCHELASTIC_RUN_ID"), "9.0");
  CK_STR_EQ(get(env, "TORCHELASTIC_RESTART_COUNT"), "0");
  CK_STR_EQ(get(env, "TORCHELASTIC_USE_AGENT_STORE"), "False");
  CK_STR_EQ(get(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  CK_STR_EQ(get(env, "OMP_NUM_THREADS"), "1");
  CK_STR_EQ(get(env, "GLOO_SOCKET_IFNAME"), "eth0");
  CK_STR_EQ(get(env, "NCCL_SOCKET_IFNAME"), "=eth0");
}
END_TEST

START_TEST(contract_owns_ranks_user_owns_tunables) {
  Environment base;
  base.set("RANK", "99");  // stale, from an outer launcher: overwritten
  base.set("MASTER_PORT", "1");
  base.set("OMP_NUM_THREADS", "8");  // the user's choice: kept
  base.set("NCCL_SOCKET_IFNAME", "ib0");
  base.set("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0");
  base.set("HOME", "/home/u");
  const auto env = env_of(base, two_by_two(0), 0, 2, "eth0");
  CK_STR_EQ(get(env, "RANK"), "0");
  CK_STR_EQ(get(env, "MASTER_PORT"), "23456");
  CK_STR_EQ(get(env, "OMP_NUM_THREADS"), "8");
  CK_STR_EQ(get(env, "NCCL_SOCKET_IFNAME"), "ib0");
  CK_STR_EQ(get(env, "TORCH_NCCL_ASYNC_ERROR_HANDLING"), "0");
  CK_STR_EQ(get(env, "TORCHELASTIC_RESTART_COUNT"), "2");
  CK_STR_EQ(get(env, "HOME"), "/home/u");
}
END_TEST

START_TEST(plan_variables_do_not_reach_workers) {
  Environment base;
  write_plan(two_by_two(0), base);
  const auto env = env_of(base, two_by_two(0), 0, 0, "");
  for (const auto& [name, value] : env.vars()) ck_assert_msg(!name.starts_with("DDP_PLAN_"), "%s leaked", name.c_str());
  ck_assert(!env.has("GLOO_SOCKET_IFNAME"));  // unknown interface: leave it to the libraries
}
END_TEST

START_TEST(single_worker_keeps_default_threads) {
  NodePlan p = two_by_two(0);
  p.nproc = 1;
  ck_assert(!env_of(Environment{}, p, 0, 0, "").has("OMP_NUM_THREADS"));
}
END_TEST

START_TEST(placement_sets_threads_device_order_and_hca) {
  NodePlan p = two_by_two(0);
  p.mode = Mode::Gpu;
  p.placements = {{"0", "0000:18:00.0", "0-3", "mlx5_0"}, {"1", "0000:98:00.0", "4-5,8", "mlx5_1"}};
  auto env = env_of(Environment{}, p, 1, 0, "eth0");
  CK_STR_EQ(get(env, "OMP_NUM_THREADS"), "3");  // one per CPU of the worker
  CK_STR_EQ(get(env, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  ck_assert(!env.has("NCCL_IB_HCA"));  // only when the site asks (ExportIbHca=yes)
  p.export_ib_hca = true;
  env = env_of(Environment{}, p, 1, 0, "eth0");
  CK_STR_EQ(get(env, "NCCL_IB_HCA"), "=mlx5_1");
  Environment user;
  user.set("NCCL_IB_HCA", "mlx5_2");
  user.set("OMP_NUM_THREADS", "7");
  env = env_of(user, p, 0, 0, "eth0");
  CK_STR_EQ(get(env, "NCCL_IB_HCA"), "mlx5_2");
  CK_STR_EQ(get(env, "OMP_NUM_THREADS"), "7");
  p.mode = Mode::Cpu;
  ck_assert(!env_of(Environment{}, p, 0, 0, "").has("CUDA_DEVICE_ORDER"));
}
END_TEST

// Agent shape: Slurm's task variables as if srun had started one task per worker.
START_TEST(slurm_view_per_worker) {
  Environment env;  // what the node's one task (the agent) got from Slurm
  for (auto [name, value] : {std::pair{"SLURM_PROCID", "1"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "2"},
                             {"SLURM_NTASKS_PER_NODE", "1"}, {"SLURM_NODEID", "1"}, {"SLURM_TASKS_PER_NODE", "1(x2)"},
                             {"PMI_RANK", "1"}, {"PMI_FD", "5"}, {"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "slurm.pmix.9.0"},
                             {"SLURM_PMIX_MAPPING_SERV", "(vector,(0,2,1))"}, {"SLURM_JOB_ID", "9"}})
    env.set(name, value);
  auto plan = two_by_two(1);
  plan.nproc = 3;
  plan.rank_base = 3;
  plan.world_size = 6;
  auto layout = planned_layout(plan);
  layout.workers_per_group = {3, 3};
  apply_slurm_worker_view(env, layout, 2);
  CK_STR_EQ(get(env, "SLURM_PROCID"), "5");
  CK_STR_EQ(get(env, "SLURM_LOCALID"), "2");
  CK_STR_EQ(get(env, "SLURM_NTASKS"), "6");
  CK_STR_EQ(get(env, "SLURM_NPROCS"), "6");
  CK_STR_EQ(get(env, "SLURM_STEP_NUM_TASKS"), "6");
  CK_STR_EQ(get(env, "SLURM_NTASKS_PER_NODE"), "3");
  CK_STR_EQ(get(env, "SLURM_TASKS_PER_NODE"), "3(x2)");
  CK_STR_EQ(get(env, "SLURM_STEP_TASKS_PER_NODE"), "3(x2)");
  CK_STR_EQ(get(env, "SLURM_GTIDS"), "3,4,5");
  CK_STR_EQ(get(env, "SLURM_NODEID"), "1");  // the group rank: Slurm's node rank without spares
  CK_STR_EQ(get(env, "SLURM_NNODES"), "2");
  auto spare = two_by_two(1);  // node 3, a spare that took group 1 of 2
  spare.node_rank = 3;
  spare.nnodes = 4;
  Environment on_spare;
  on_spare.set("SLURM_NODEID", "3");
  on_spare.set("SLURM_NNODES", "4");
  auto spare_layout = planned_layout(spare);
  spare_layout.workers_per_group = {2, 2};
  apply_slurm_worker_view(on_spare, spare_layout, 0);
  CK_STR_EQ(get(on_spare, "SLURM_NODEID"), "1");
  CK_STR_EQ(get(on_spare, "SLURM_NNODES"), "2");
  CK_STR_EQ(get(on_spare, "SLURM_STEP_NUM_NODES"), "2");
  CK_STR_EQ(get(on_spare, "SLURM_PROCID"), "2");
  CK_STR_EQ(get(env, "SLURM_JOB_ID"), "9");
  for (const char* gone : {"PMI_RANK", "PMI_FD", "PMIX_RANK", "PMIX_NAMESPACE", "SLURM_PMIX_MAPPING_SERV"})
    ck_assert_msg(!env.has(gone), "%s should be removed", gone);
  CK_STR_EQ(slurm_tasks_per_node({4, 4, 2, 4}), "4(x2),2,4");
  CK_STR_EQ(slurm_tasks_per_node({1}), "1");
  CK_STR_EQ(slurm_tasks_per_node({}), "");
}
END_TEST

Suite* worker_env_suite() {
  return make_suite("worker_env", {torchrun_contract_variables, contract_owns_ranks_user_owns_tunables,
                                   plan_variables_do_not_reach_workers, single_worker_keeps_default_threads,
                                   placement_sets_threads_device_order_and_hca, slurm_view_per_worker});
}
