// plan_step (common/ddp/plan/step_plan.hpp): every decision the plugin makes for a
// step on one node, tested on values (no Slurm, no hwloc).
#include <set>

#include "ddp/plan/ports.hpp"
#include "ddp/plan/step_plan.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {

constexpr std::uint32_t kBatchStepId = 0xfffffffb;  // SLURM_BATCH_SCRIPT

// A step of `nodes` nodes (n0, n1, ...) seen from node `node_id`, with
// `tasks` tasks on each node and four GPUs (minors 0-3) on this node.
StepFacts facts_for(std::uint32_t nodes, std::uint32_t node_id, std::vector<std::uint32_t> tasks = {}) {
  StepFacts f;
  f.job_id = 42;
  f.step_id = 3;
  f.node_id = node_id;
  for (std::uint32_t i = 0; i < nodes; ++i) f.nodes.push_back("n" + std::to_string(i));
  f.tasks_per_node = tasks.empty() ? std::vector<std::uint32_t>(nodes, 1) : tasks;
  f.local_tasks = f.tasks_per_node[node_id];
  f.total_tasks = 0;
  for (auto t : f.tasks_per_node) f.total_tasks += t;
  f.shape = step_shape(false, f.total_tasks, f.nodes.size());
  f.step_gpus = {"0", "1", "2", "3"};
  f.visible_gpus = {"0", "1", "2", "3"};
  return f;
}

DdpRequest ddp_request() {
  DdpRequest r;
  r.enabled = true;
  return r;
}

const std::string kAddr = "198.18.7.10";

StepPlan planned(const StepFacts& f, const DdpRequest& r, const Settings& s = {}) {
  const auto p = plan_step(f, s, r, kAddr, NodeHardware{});
  ck_assert_msg(p.ok(), "%s", p.ok() ? "" : p.error().c_str());
  return *p;
}

std::string refusal(const StepFacts& f, const DdpRequest& r, const std::string& addr = kAddr) {
  const auto p = plan_step(f, Settings{}, r, addr, NodeHardware{});
  ck_assert_msg(!p.ok(), "planned, but a refusal was expected");
  return p.error();
}

// Two GPUs (bus 18 and 98) on two NUMA nodes of four cores each, a NIC next to each.
Topology two_socket_topology() {
  Topology t;
  const std::vector<std::vector<unsigned>> low = {{0}, {1}, {2}, {3}}, high = {{4}, {5}, {6}, {7}};
  t.gpus = {{"0000:18:00.0", low}, {"0000:98:00.0", high}};
  t.nics = {{"mlx5_0", "0000:1a:00.0"}, {"mlx5_1", "0000:9a:00.0"}};
  t.gpu_nic_path = {{PathType::PIX, PathType::SYS}, {PathType::SYS, PathType::PIX}};
  t.allowed_cores = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
  return t;
}

NodeHardware two_socket_hardware() {
  return {two_socket_topology(), std::map<unsigned, std::string>{{0, "0000:98:00.0"}, {1, "0000:18:00.0"}}};
}

}  // namespace

START_TEST(shape_is_decided_by_tasks_per_node) {
  ck_assert(step_shape(false, 2, 2) == Shape::Agent);
  ck_assert(step_shape(false, 1, 1) == Shape::Agent);
  ck_assert(step_shape(false, 5, 2) == Shape::Task);  // heterogeneous: 3 + 2
  ck_assert(step_shape(true, 8, 2) == Shape::Batch);  // the batch script, however many tasks
}
END_TEST

START_TEST(agent_shape_runs_one_worker_per_gpu) {
  Settings s;
  s.master_interface = "ib0";
  const auto p = planned(facts_for(3, 1), ddp_request(), s);
  ck_assert(p.shape == Shape::Agent);
  CK_STR_EQ(p.node.run_id, "42.3");
  ck_assert(p.node.mode == Mode::Gpu);
  ck_assert_uint_eq(p.node.node_rank, 1);
  ck_assert_uint_eq(p.node.nnodes, 3);
  ck_assert_uint_eq(p.node.nproc, 4);
  ck_assert_uint_eq(p.node.rank_base, 4);
  ck_assert_uint_eq(p.node.world_size, 12);
  ck_assert_uint_eq(p.node.groups, 3);
  ck_assert_uint_eq(p.node.group_rank, 1);
  CK_STR_EQ(p.node.master_addr, kAddr);
  CK_STR_EQ(p.node.master_interface, "ib0");  // node 0's agent looks it up
  ck_assert(p.warnings.size() == 1);          // the topology was not loaded: unbound, and said
  CK_CONTAINS(p.warnings[0], "node n1: workers run unbound");
  ck_assert(p.node.placements.empty());
}
END_TEST

START_TEST(task_shape_ranks_follow_heterogeneous_task_counts) {
  // 4, 2 and 8 tasks: rank bases 0, 4 and 6 of 14, each task one worker.
  const std::uint32_t bases[] = {0, 4, 6};
  for (std::uint32_t node = 0; node < 3; ++node) {
    auto f = facts_for(3, node, {4, 2, 8});
    f.step_gpus = {"0", "1", "2", "3", "4", "5", "6", "7"};
    Settings s;
    s.master_interface = "ib0";
    const auto p = planned(f, ddp_request(), s);
    ck_assert(p.shape == Shape::Task);
    ck_assert_uint_eq(p.node.nproc, f.tasks_per_node[node]);
    ck_assert_uint_eq(p.node.rank_base, bases[node]);
    ck_assert_uint_eq(p.node.world_size, 14);
    CK_STR_EQ(p.node.master_interface, "");  // no agent to look it up: NodeAddr
  }
}
END_TEST

START_TEST(mode_is_gpu_with_gpus_and_cpu_without) {
  auto f = facts_for(2, 0);
  auto r = ddp_request();
  r.gpus = 2;
  auto p = planned(f, r);
  ck_assert(p.node.mode == Mode::Gpu);
  ck_assert_uint_eq(p.node.nproc, 2);
  ck_assert_uint_eq(p.node.world_size, 4);

  f.step_gpus.clear();
  p = planned(f, ddp_request());
  ck_assert(p.node.mode == Mode::Cpu);
  ck_assert_uint_eq(p.node.nproc, 1);

  r = ddp_request();
  r.mode = Mode::Cpu;
  r.procs = 3;
  p = planned(facts_for(2, 1), r);  // CPU workers although the step has GPUs
  ck_assert(p.node.mode == Mode::Cpu);
  ck_assert_uint_eq(p.node.nproc, 3);
  ck_assert_uint_eq(p.node.rank_base, 3);
}
END_TEST

START_TEST(spares_hold_no_ranks_and_set_the_restart_budget) {
  auto r = ddp_request();
  r.spares = 1;
  const auto worker = planned(facts_for(4, 2), r);
  ck_assert_uint_eq(worker.node.groups, 3);
  ck_assert_uint_eq(worker.node.spares, 1);
  ck_assert_uint_eq(worker.node.rank_base, 8);
  ck_assert_uint_eq(worker.node.world_size, 12);  // 3 groups of 4, the spare none
  ck_assert_uint_eq(worker.node.max_restarts, 1);  // one node may be lost
  const auto spare = planned(facts_for(4, 3), r);
  ck_assert_uint_eq(spare.node.rank_base, 0);
  ck_assert_uint_eq(spare.node.world_size, 12);
  ck_assert_uint_eq(spare.node.group_rank, 3);

  r = ddp_request();
  r.min_nodes = 2;
  auto p = planned(facts_for(5, 0), r);
  ck_assert_uint_eq(p.node.min_nodes, 2);
  ck_assert_uint_eq(p.node.groups, 5);
  ck_assert_uint_eq(p.node.max_restarts, 3);  // 5 groups down to 2
  r.restarts = 7;
  p = planned(facts_for(5, 0), r);
  ck_assert_uint_eq(p.node.max_restarts, 7);  // the user's budget wins
}
END_TEST

START_TEST(spares_and_min_nodes_refusals_name_the_fix) {
  auto r = ddp_request();
  r.spares = 2;
  CK_CONTAINS(refusal(facts_for(2, 0), r), "--ddp-spares=2 leaves no node for the workers of this 2-node step");
  CK_CONTAINS(refusal(facts_for(2, 0, {2, 2}), r), "--ddp-spares needs one task per node");
  r = ddp_request();
  r.min_nodes = 4;
  CK_CONTAINS(refusal(facts_for(3, 0), r), "--ddp-min-nodes=4 is more than the 3 node(s) that run workers");
}
END_TEST

START_TEST(derived_master_port_is_inside_the_range_and_moves_per_attempt) {
  Settings s;
  s.port_range = {31000, 31999};
  const auto p = planned(facts_for(2, 0), ddp_request(), s);
  ck_assert(!p.node.master_port_fixed);
  ck_assert_uint_ge(p.node.master_port, 31000);
  ck_assert_uint_le(p.node.master_port, 31999);
  ck_assert_uint_eq(p.node.master_port, derive_port(s.port_range, 42, 3, 0));
  ck_assert_uint_eq(p.node.rdzv_port, derive_rdzv_port(s.port_range, 42, 3));
  ck_assert(p.node.port_range == s.port_range);
  ck_assert_uint_eq(p.node.job_id, 42);
  ck_assert_uint_eq(p.node.step_id, 3);
  ck_assert_uint_ne(master_port_for(p.node, 1), p.node.master_port);
}
END_TEST

START_TEST(user_port_stays_fixed) {
  auto r = ddp_request();
  r.port = 29500;
  const auto p = planned(facts_for(2, 1), r);
  ck_assert(p.node.master_port_fixed);
  ck_assert_uint_eq(p.node.master_port, 29500);  // outside the range: the user's choice
  ck_assert_uint_eq(master_port_for(p.node, 5), 29500);
}
END_TEST

// The rule otherwise checked on a live cluster only: whatever port the user
// gives with --ddp-port, the agents' rendezvous port is another one.
START_TEST(rendezvous_port_never_takes_the_users_port) {
  Settings s;
  // Every port of ranges large and small (63 ports: slot 63 wraps onto slot 0).
  for (const std::uint16_t last : {20999, 20063, 20062, 20001})
    for (std::uint32_t job : {1u, 42u, 777777u})
      for (std::uint32_t step : {0u, 3u, kBatchStepId})
        for (std::uint32_t port = 20000; port <= last; ++port)
          ck_assert_uint_ne(rdzv_port_for({20000, last}, job, step, std::uint16_t(port)), port);
  s.port_range = {20000, 20999};
  // The case that needs the rule: --ddp-port is the step's rendezvous slot.
  auto f = facts_for(2, 0);
  auto r = ddp_request();
  r.port = derive_rdzv_port(s.port_range, f.job_id, f.step_id);
  const auto p = planned(f, r, s);
  ck_assert_uint_eq(p.node.master_port, *r.port);
  ck_assert_uint_ne(p.node.rdzv_port, *r.port);
  ck_assert_uint_eq(p.node.rdzv_port, derive_port(s.port_range, f.job_id, f.step_id, 0));
}
END_TEST

START_TEST(site_settings_and_user_options_reach_the_plan) {
  Settings s;
  s.rdzv_timeout = std::chrono::milliseconds(30000);
  s.heartbeat_timeout = std::chrono::milliseconds(2000);
  s.health_check = "/usr/lib/site/gpu-health";
  s.health_check_timeout = std::chrono::milliseconds(90000);
  s.export_ib_hca = true;
  s.requeue = true;
  s.requeue_wait = std::chrono::milliseconds(45000);
  s.job_comment = false;
  s.hang_timeout = std::chrono::milliseconds(600000);
  auto f = facts_for(2, 0);
  f.kill_wait = std::chrono::seconds(30);
  auto r = ddp_request();
  r.verbose = true;
  auto p = planned(f, r, s).node;
  ck_assert_uint_eq(p.rdzv_timeout_ms, 30000);
  ck_assert_uint_eq(p.heartbeat_timeout_ms, 2000);
  CK_STR_EQ(p.health_check, "/usr/lib/site/gpu-health");
  ck_assert_uint_eq(p.health_check_timeout_ms, 90000);
  ck_assert(p.export_ib_hca && p.requeue && p.verbose);
  ck_assert_uint_eq(p.requeue_wait_ms, 45000);
  ck_assert(!p.job_comment);  // JobComment=no reaches node 0's agent
  ck_assert_uint_eq(p.hang_timeout_ms, 600000);
  ck_assert_uint_eq(p.stop_grace_ms, std::uint32_t(stop_grace_for(std::chrono::seconds(30)).count()));
  // The user's options win over the site's defaults.
  r.requeue = false;
  r.hang_timeout_s = 0;
  s.stop_grace = std::chrono::milliseconds(7000);
  p = planned(f, r, s).node;
  ck_assert(!p.requeue);
  ck_assert_uint_eq(p.hang_timeout_ms, 0);
  ck_assert_uint_eq(p.stop_grace_ms, 7000);
}
END_TEST

// The options only the agent implements, asked for in the task shape: refused
// with the fix; in the agent shape, and as the site's defaults, fine.
START_TEST(agent_only_options_in_the_task_shape_are_refused) {
  const auto task = facts_for(2, 0, {2, 2});
  const auto agent = facts_for(2, 0);
  ck_assert(task.shape == Shape::Task && agent.shape == Shape::Agent);
  auto r = ddp_request();
  ck_assert(check_options_for_shape(task, r).ok());
  r.restarts = 2;
  CK_CONTAINS(check_options_for_shape(task, r).error(), "--ddp-restarts needs one task per node");
  CK_CONTAINS(check_options_for_shape(task, r).error(), "drop --ntasks-per-node");
  ck_assert(check_options_for_shape(agent, r).ok());
  r = ddp_request();
  r.hang_timeout_s = 60;
  CK_CONTAINS(check_options_for_shape(task, r).error(), "--ddp-hang-timeout needs one task per node");
  r.hang_timeout_s = 0;  // off, as asked
  ck_assert(check_options_for_shape(task, r).ok());
  r = ddp_request();
  r.requeue = true;
  CK_CONTAINS(check_options_for_shape(task, r).error(), "--ddp-requeue needs one task per node");
  r.requeue = false;
  ck_assert(check_options_for_shape(task, r).ok());
  r.preflight = PreflightAction::Check;  // the agents run the checks
  CK_CONTAINS(check_options_for_shape(task, r).error(), "--ddp-preflight needs one task per node");
  r.preflight = PreflightAction::Off;
  ck_assert(check_options_for_shape(task, r).ok());
  ck_assert(check_options_for_shape(agent, ddp_request()).ok());
}
END_TEST

START_TEST(batch_script_gets_master_and_the_per_node_count) {
  auto f = facts_for(3, 0);
  f.step_id = kBatchStepId;
  f.shape = step_shape(true, f.total_tasks, f.nodes.size());
  Settings s;
  s.port_range = {21000, 21999};
  auto p = planned(f, ddp_request(), s);
  ck_assert(p.shape == Shape::Batch);
  CK_STR_EQ(p.node.run_id, "42.batch");
  ck_assert_uint_eq(p.node.nnodes, 3);
  ck_assert_uint_eq(p.node.groups, 3);
  CK_STR_EQ(p.node.master_addr, kAddr);
  ck_assert_uint_eq(p.node.master_port, derive_port(s.port_range, 42, kBatchStepId, 0));
  ck_assert_uint_ne(p.node.master_port, derive_port(s.port_range, 42, 0, 0));  // not step 0's
  ck_assert_uint_eq(p.node.nproc, 4);
  ck_assert(p.node.mode == Mode::Gpu);
  ck_assert(p.warnings.empty());  // nothing placed
  auto r = ddp_request();
  r.port = 29500;
  r.mode = Mode::Gpu;
  f.step_gpus.clear();  // --ddp=gpu on a batch node without GPUs: count unknown
  p = planned(f, r, s);
  ck_assert_uint_eq(p.node.master_port, 29500);
  ck_assert_uint_eq(p.node.nproc, 0);
  CK_STR_EQ(refusal(f, r, ""), "node 0's address was not looked up (internal error; please report it)");
}
END_TEST

START_TEST(refusals_name_the_node_and_the_fix) {
  auto r = ddp_request();
  r.gpus = 8;
  CK_STR_EQ(refusal(facts_for(2, 1), r),
            "--ddp-gpus=8 but the step has only 4 GPU(s) on node n1; request more (e.g. --gpus-per-node=8) or "
            "lower --ddp-gpus");
  r.gpus = 3;  // task shape: each task is one worker
  CK_CONTAINS(refusal(facts_for(2, 0, {2, 2}), r), "--ddp-gpus=3 disagrees with the step's 2 tasks on node n0");
  auto f = facts_for(2, 0, {6, 6});
  CK_CONTAINS(refusal(f, ddp_request()), "more workers than GPUs: 6 tasks on node n0 but only 4 GPU(s)");
  // Worker counts come first, then the address.
  CK_STR_EQ(refusal(facts_for(2, 0), ddp_request(), ""),
            "node 0's address was not looked up (internal error; please report it)");
  f = facts_for(1, 0);
  f.shape = Shape::None;
  CK_CONTAINS(refusal(f, ddp_request()), "internal error");
}
END_TEST

START_TEST(launchers_and_containers_are_refused_in_the_agent_shape_only) {
  auto agent = facts_for(2, 0);
  auto task = facts_for(2, 0, {2, 2});
  agent.argv = task.argv = {"torchrun", "--nproc-per-node=4", "train.py"};
  CK_CONTAINS(check_step_command(agent).error(), "the step's command is torchrun, a launcher");
  ck_assert(check_step_command(task).ok());  // each task is a worker; the name means nothing
  agent.argv = task.argv = {"python", "train.py"};
  agent.local_rank_set = task.local_rank_set = true;
  CK_CONTAINS(check_step_command(agent).error(), "LOCAL_RANK is already set");
  CK_CONTAINS(check_step_command(task).error(), "LOCAL_RANK is already set");
  agent.local_rank_set = task.local_rank_set = false;
  agent.container = task.container = "--container-image=nvcr.io/nvidia/pytorch:24.05";
  CK_CONTAINS(check_step_command(agent).error(), "cannot start workers inside a pyxis container");
  ck_assert(check_step_command(task).ok());
}
END_TEST

START_TEST(workers_are_placed_next_to_their_gpus) {
  // Slurm's GPU minors 0 and 1 are bus 98 and 18: worker 0 sits on the high cores.
  auto f = facts_for(2, 0);
  f.step_gpus = {"0", "1"};
  f.visible_gpus = {"0", "1"};
  auto p = plan_step(f, Settings{}, ddp_request(), kAddr, two_socket_hardware());
  ck_assert(p.ok());
  const auto& w = p->node.placements;
  ck_assert_uint_eq(w.size(), 2);
  CK_STR_EQ(describe_placement(w[0]), describe_placement({"0", "0000:98:00.0", "4-7", "mlx5_1"}));
  CK_STR_EQ(describe_placement(w[1]), describe_placement({"1", "0000:18:00.0", "0-3", "mlx5_0"}));
  CK_STR_EQ(w[0].gpu, "0");
  ck_assert(p->warnings.empty());
}
END_TEST

START_TEST(placement_problems_leave_workers_unbound_with_a_warning) {
  auto f = facts_for(2, 1);
  f.step_gpus = {"0", "5"};  // minor 5 is not in the driver's files
  f.visible_gpus = {"0", "1"};
  Settings s;
  s.gpu_info_dir = "/proc/driver/nvidia/gpus";
  NodePlan plan;
  plan.mode = Mode::Gpu;
  plan.nproc = 2;
  std::vector<std::string> warnings;
  auto w = place_workers(s, plan, f, two_socket_hardware(), warnings);
  ck_assert_uint_eq(w.size(), 2);
  CK_STR_EQ(w[0].gpu_bus_id, "0000:98:00.0");
  CK_STR_EQ(w[1].gpu_bus_id, "");  // unknown: not bound to a guess
  CK_STR_EQ(w[1].gpu, "1");
  ck_assert_uint_ge(warnings.size(), 1);
  CK_CONTAINS(warnings[0], "node n1: GPU 5 (/dev/nvidia5) is not in /proc/driver/nvidia/gpus");
  // A topology hwloc could not load: no placements at all.
  warnings.clear();
  NodeHardware broken;
  broken.topology = ddp::Error{"hwloc: no topology"};
  ck_assert(place_workers(s, plan, f, broken, warnings).empty());
  ck_assert_uint_eq(warnings.size(), 1);
  CK_STR_EQ(warnings[0], "node n1: workers run unbound: hwloc: no topology");
  // A CUDA_VISIBLE_DEVICES entry no device has, which the plan's text form
  // could not carry: left out with a warning, and the plan still reads back.
  warnings.clear();
  f.step_gpus = {"0", "1"};
  f.visible_gpus = {"0", "GPU-a|b;c"};
  w = place_workers(s, plan, f, two_socket_hardware(), warnings);
  CK_STR_EQ(w[0].gpu, "0");
  CK_STR_EQ(w[1].gpu, "");
  ck_assert_uint_eq(warnings.size(), 1);
  CK_CONTAINS(warnings[0], "node n1: CUDA_VISIBLE_DEVICES entry 'GPU-a|b;c' is not a GPU index or UUID");
  const auto back = decode_placements(encode_placements(w));
  ck_assert(back.ok() && *back == w);
}
END_TEST

START_TEST(cpu_workers_share_the_cores_unless_the_site_says_no) {
  auto f = facts_for(2, 0);
  NodePlan plan;
  plan.mode = Mode::Cpu;
  plan.nproc = 2;
  std::vector<std::string> warnings;
  Settings s;
  auto w = place_workers(s, plan, f, two_socket_hardware(), warnings);
  ck_assert_uint_eq(w.size(), 2);
  CK_STR_EQ(w[0].cpus, "0-3");
  CK_STR_EQ(w[1].cpus, "4-7");
  CK_STR_EQ(w[0].gpu, "");
  s.bind_cpus = false;  // BindCpus=no
  w = place_workers(s, plan, f, two_socket_hardware(), warnings);
  CK_STR_EQ(w[0].cpus, "");
  CK_STR_EQ(w[1].cpus, "");
}
END_TEST

Suite* step_plan_suite() {
  return make_suite("step_plan", {shape_is_decided_by_tasks_per_node,
                                  agent_shape_runs_one_worker_per_gpu,
                                  task_shape_ranks_follow_heterogeneous_task_counts,
                                  mode_is_gpu_with_gpus_and_cpu_without,
                                  spares_hold_no_ranks_and_set_the_restart_budget,
                                  spares_and_min_nodes_refusals_name_the_fix,
                                  derived_master_port_is_inside_the_range_and_moves_per_attempt,
                                  user_port_stays_fixed,
                                  rendezvous_port_never_takes_the_users_port,
                                  site_settings_and_user_options_reach_the_plan,
                                  agent_only_options_in_the_task_shape_are_refused,
                                  batch_script_gets_master_and_the_per_node_count,
                                  refusals_name_the_node_and_the_fix,
                                  launchers_and_containers_are_refused_in_the_agent_shape_only,
                                  workers_are_placed_next_to_their_gpus,
                                  placement_problems_leave_workers_unbound_with_a_warning,
                                  cpu_workers_share_the_cores_unless_the_site_says_no});
}
