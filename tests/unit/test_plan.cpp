#include <set>

#include "ddp/plan/ports.hpp"
#include "ddp/plan/workers.hpp"
#include "ddp/wire/node_plan.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {
NodePlan sample_plan() {
  NodePlan p;
  p.run_id = "42.3";
  p.mode = Mode::Gpu;
  p.node_rank = 1;
  p.nnodes = 3;
  p.nproc = 4;
  p.rank_base = 4;
  p.world_size = 12;
  p.master_addr = "198.18.7.10";
  p.master_port = 24567;
  p.max_restarts = 2;
  p.master_port_fixed = true;
  p.job_id = 42;
  p.step_id = 3;
  p.array_job_id = 40;
  p.array_task_id = 2;
  p.port_range = {21000, 21999};
  p.rdzv_port = 21555;
  p.rdzv_timeout_ms = 30000;
  p.heartbeat_timeout_ms = 2000;
  p.stop_grace_ms = 12000;
  p.verbose = true;
  p.export_ib_hca = true;
  p.requeue = true;
  p.requeue_wait_ms = 45000;
  p.job_comment = false;  // JobComment=no reaches node 0
  p.hang_timeout_ms = 300000;
  p.spares = 1;  // node 2 waits
  p.min_nodes = 1;
  p.stragglers = StragglerAction::Swap;
  p.preflight = PreflightAction::Check;
  p.group_rank = 1;
  p.groups = 2;
  p.health_check = "/usr/lib/site/gpu-health";
  p.health_check_timeout_ms = 90000;
  p.bad_node_report = "/run/slurm-ddp/7.0";
  p.master_interface = "ib0";
  for (int i = 0; i < 4; ++i)
    p.placements.push_back({std::to_string(i), "0000:1" + std::to_string(i) + ":00.0",
                            std::to_string(i * 2) + "-" + std::to_string(i * 2 + 1), i < 2 ? "mlx5_0" : "mlx5_1"});
  return p;
}
}  // namespace

START_TEST(plan_round_trips_through_the_environment) {
  Environment env;
  write_plan(sample_plan(), env);
  // One variable per field, each its own (a row written twice would take
  // another field's place), and the version.
  std::set<std::string> names;
  for (const auto& [name, value] : env.vars())
    if (name.rfind("DDP_PLAN_", 0) == 0) names.insert(name);
  ck_assert_uint_eq(names.size(), 37 + 1);
  const auto back = read_plan(env);
  ck_assert_msg(back.ok(), "%s", back.ok() ? "" : back.error().c_str());
  ck_assert(*back == sample_plan());
  // A 0.2.0 plugin's plan has no DDP_PLAN_STRAGGLERS: a report, the default.
  env.unset("DDP_PLAN_STRAGGLERS");
  ck_assert(read_plan(env)->stragglers == StragglerAction::Report);
  env.set("DDP_PLAN_STRAGGLERS", "later");
  CK_CONTAINS(read_plan(env).error(), "DDP_PLAN_STRAGGLERS='later': expected report, swap or off");
  env.unset("DDP_PLAN_STRAGGLERS");
  env.unset("DDP_PLAN_PREFLIGHT");  // nor DDP_PLAN_PREFLIGHT: none, the default
  ck_assert(read_plan(env)->preflight == PreflightAction::Off);
  env.set("DDP_PLAN_PREFLIGHT", "twice");
  CK_CONTAINS(read_plan(env).error(), "DDP_PLAN_PREFLIGHT='twice': expected off, check or swap");
}
END_TEST

// scontrol names an array task ARRAYJOBID_TASKID: the first task's own id is
// the array's, and `scontrol requeue` of that id requeues every task.
START_TEST(an_array_task_is_named_to_scontrol_by_array_and_task) {
  NodePlan p = sample_plan();
  CK_STR_EQ(scontrol_job_name(p), "40_2");
  p.job_id = 40;  // the first task
  p.array_task_id = 0;
  CK_STR_EQ(scontrol_job_name(p), "40_0");
  p.array_job_id = 0;  // no array
  CK_STR_EQ(scontrol_job_name(p), "40");
  // A plan without the array fields (written by hand) is no array task.
  Environment env;
  write_plan(sample_plan(), env);
  env.unset("DDP_PLAN_ARRAY_JOB_ID");
  env.unset("DDP_PLAN_ARRAY_TASK_ID");
  CK_STR_EQ(scontrol_job_name(*read_plan(env)), "42");
  env.set("DDP_PLAN_ARRAY_JOB_ID", "x");
  CK_CONTAINS(read_plan(env).error(), "DDP_PLAN_ARRAY_JOB_ID");
}
END_TEST

START_TEST(plan_from_another_release_is_refused) {
  Environment env;
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_VERSION", std::to_string(kPlanVersion + 1));
  const auto r = read_plan(env);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), "same slurm-ddp release");
}
END_TEST

START_TEST(plan_missing_or_inconsistent_is_refused) {
  Environment env;
  CK_CONTAINS(read_plan(env).error(), "--nproc");  // no plan at all: say how to run standalone
  write_plan(sample_plan(), env);
  env.unset("DDP_PLAN_MASTER_PORT");
  CK_CONTAINS(read_plan(env).error(), "DDP_PLAN_MASTER_PORT");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_NODE_RANK", "3");
  CK_CONTAINS(read_plan(env).error(), "NODE_RANK");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_RANK_BASE", "10");
  CK_CONTAINS(read_plan(env).error(), "WORLD_SIZE");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_MODE", "auto");
  ck_assert(!read_plan(env).ok());
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_WORKERS", "0|a|0-1|;1|b|2-3|");  // placements for some workers only
  CK_CONTAINS(read_plan(env).error(), "places 2 of 4 workers");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_WORKERS", "0|a|0-1|;1|b|2-3|;2|c|4-5|;3|d|6-x|");
  CK_CONTAINS(read_plan(env).error(), "DDP_PLAN_WORKERS: the placement's CPU list '6-x' is malformed");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_SPARES", "2");  // 3 nodes: 2 groups and 2 spares do not add up
  CK_CONTAINS(read_plan(env).error(), "do not fit DDP_PLAN_NNODES");
  write_plan(sample_plan(), env);
  env.set("DDP_PLAN_MIN_NODES", "3");  // more than the 2 groups
  CK_CONTAINS(read_plan(env).error(), "MIN_NODES");
}
END_TEST

START_TEST(rank_layout_is_a_running_sum_in_node_order) {
  const std::vector<std::uint32_t> per_node{4, 2, 8, 1};
  const std::uint32_t bases[] = {0, 4, 6, 14};
  for (std::uint32_t n = 0; n < per_node.size(); ++n) {
    const auto l = rank_layout(per_node, n);
    ck_assert(l.ok());
    ck_assert_uint_eq(l->rank_base, bases[n]);
    ck_assert_uint_eq(l->world_size, 15);
  }
  ck_assert(!rank_layout(per_node, 4).ok());
}
END_TEST

START_TEST(port_is_deterministic_and_inside_the_range) {
  const PortRange range{20000, 29999};
  for (std::uint32_t job = 1; job < 5000; job += 7)
    for (std::uint32_t step = 0; step < 4; ++step) {
      const auto p = derive_port(range, job, step, 0);
      ck_assert_uint_ge(p, range.first);
      ck_assert_uint_le(p, range.last);
      ck_assert_uint_eq(p, derive_port(range, job, step, 0));
    }
  // Slurm's special step ids (batch, extern) stay inside too.
  const auto batch = derive_port(range, 77, 0xfffffffb, 0);
  ck_assert(batch >= range.first && batch <= range.last);
  const PortRange one{29500, 29500};
  ck_assert_uint_eq(derive_port(one, 123, 9, 3), 29500);
}
END_TEST

START_TEST(steps_and_attempts_of_one_job_never_share_a_port) {
  const PortRange range{20000, 29999};
  std::set<std::uint16_t> seen;
  // 100 steps x (rendezvous + 63 attempts) fit in 10000 ports: all distinct.
  for (std::uint32_t step = 0; step < 100; ++step) {
    ck_assert(seen.insert(derive_rdzv_port(range, 123456, step)).second);
    for (std::uint32_t attempt = 0; attempt < 63; ++attempt)
      ck_assert(seen.insert(derive_port(range, 123456, step, attempt)).second);
  }
}
END_TEST

START_TEST(jobs_spread_over_the_range) {
  const PortRange range{20000, 29999};
  std::set<std::uint16_t> first_ports;
  for (std::uint32_t job = 1000; job < 1100; ++job) first_ports.insert(derive_port(range, job, 0, 0));
  ck_assert_uint_ge(first_ports.size(), 95);  // consecutive job ids do not pile up
}
END_TEST

START_TEST(workers_follow_mode_and_gpus) {
  DdpRequest r;
  r.enabled = true;
  auto w = resolve_workers(r, 0, "n0");  // auto, no GPUs: one CPU worker
  ck_assert(w.ok() && *w == (WorkerCount{Mode::Cpu, 1}));
  w = resolve_workers(r, 4, "n0");  // auto with GPUs: one per GPU
  ck_assert(w.ok() && *w == (WorkerCount{Mode::Gpu, 4}));
  r.gpus = 2;
  w = resolve_workers(r, 4, "n0");
  ck_assert(w.ok() && *w == (WorkerCount{Mode::Gpu, 2}));
  r.gpus = 8;
  const auto too_many = resolve_workers(r, 4, "n7");
  ck_assert(!too_many.ok());
  CK_CONTAINS(too_many.error(), "n7");
  CK_CONTAINS(too_many.error(), "--gpus-per-node=8");
}
END_TEST

START_TEST(workers_cpu_and_gpu_errors_name_the_fix) {
  DdpRequest r;
  r.enabled = true;
  r.mode = Mode::Cpu;
  r.procs = 3;
  auto w = resolve_workers(r, 4, "n0");  // cpu mode ignores the step's GPUs
  ck_assert(w.ok() && *w == (WorkerCount{Mode::Cpu, 3}));
  r.mode = Mode::Gpu;
  r.procs.reset();
  const auto none = resolve_workers(r, 0, "n1");
  ck_assert(!none.ok());
  CK_CONTAINS(none.error(), "no GPUs on node n1");
  CK_CONTAINS(none.error(), "--ddp=cpu");
}
END_TEST

START_TEST(tasks_per_node_expands_slurm_notation) {
  const auto t = parse_tasks_per_node("2(x3),1");
  ck_assert(t.ok());
  ck_assert(*t == (std::vector<std::uint32_t>{2, 2, 2, 1}));
  ck_assert(*parse_tasks_per_node("4") == std::vector<std::uint32_t>{4});
  ck_assert(*parse_tasks_per_node("1,3(x2)") == (std::vector<std::uint32_t>{1, 3, 3}));
  // A node without a task (fuzz.job_env: a plan of WORLD_SIZE=0 the agent refuses).
  for (const char* bad : {"", "x", "2(x", "2(x0)", "2,,1", "2(x3", "0(x2)", "1,0"})
    ck_assert_msg(!parse_tasks_per_node(bad).ok(), "%s", bad);
}
END_TEST

START_TEST(task_shape_counts_are_slurms_tasks) {
  DdpRequest r;
  r.enabled = true;
  ck_assert(*resolve_task_workers(r, 0, 3, "n0") == (WorkerCount{Mode::Cpu, 3}));
  ck_assert(*resolve_task_workers(r, 4, 4, "n0") == (WorkerCount{Mode::Gpu, 4}));
  const auto too_many = resolve_task_workers(r, 2, 4, "n1");  // more workers than GPUs
  ck_assert(!too_many.ok());
  CK_CONTAINS(too_many.error(), "more workers than GPUs: 4 tasks on node n1 but only 2 GPU(s)");
  r.procs = 2;
  r.mode = Mode::Cpu;
  CK_CONTAINS(resolve_task_workers(r, 0, 3, "n0").error(), "--ddp-procs=2 disagrees with the step's 3 tasks");
  r.procs = 3;
  ck_assert(resolve_task_workers(r, 0, 3, "n0").ok());
}
END_TEST

// --gpus-per-task / --gpu-bind narrow each task to its own GPU: cuda:LOCAL_RANK
// is gone, so every task refuses alike unless the script says it uses cuda:0.
START_TEST(task_shape_gpu_per_task_is_refused_with_the_fix) {
  ck_assert(check_task_gpu_view(2, 1, 2, false).ok());  // --gpus-per-node: every task sees both
  ck_assert(check_task_gpu_view(1, 0, 1, false).ok());  // one task per node: cuda:0 is LOCAL_RANK 0
  ck_assert(check_task_gpu_view(1, 1, 2, true).ok());   // SDDP_ONE_GPU_PER_WORKER=1
  ck_assert(check_task_gpu_view(0, 1, 2, false).ok());  // no GPU list: nothing to say here
  for (std::uint32_t local : {0u, 3u}) {
    const auto r = check_task_gpu_view(1, local, 4, false);
    ck_assert(!r.ok());
    CK_CONTAINS(r.error(), "--gpus-per-node=4");
    CK_CONTAINS(r.error(), "SDDP_ONE_GPU_PER_WORKER=1");
  }
  CK_CONTAINS(check_task_gpu_view(1, 3, 4, false).error(), "cuda:3 for LOCAL_RANK=3");
}
END_TEST

START_TEST(later_attempts_get_fresh_ports_unless_fixed) {
  NodePlan p;
  p.job_id = 7;
  p.step_id = 2;
  p.master_port = derive_port(p.port_range, 7, 2, 0);
  ck_assert_uint_eq(master_port_for(p, 0), p.master_port);
  ck_assert_uint_eq(master_port_for(p, 1), derive_port(p.port_range, 7, 2, 1));
  ck_assert_uint_ne(master_port_for(p, 1), p.master_port);
  ck_assert_uint_ne(master_port_for(p, 1), derive_rdzv_port(p.port_range, 7, 2));
  p.master_port_fixed = true;
  ck_assert_uint_eq(master_port_for(p, 5), p.master_port);
}
END_TEST

// One text form for a node's placements: the plan's DDP_PLAN_WORKERS and
// JOIN's `workers` both carry it, and a malformed one is refused, not guessed.
START_TEST(placements_round_trip_through_their_one_text_form) {
  const auto placements = sample_plan().placements;
  const auto text = encode_placements(placements);
  ck_assert_str_eq(text.c_str(),
                   "0|0000:10:00.0|0-1|mlx5_0;1|0000:11:00.0|2-3|mlx5_0;2|0000:12:00.0|4-5|mlx5_1;"
                   "3|0000:13:00.0|6-7|mlx5_1");
  const auto back = decode_placements(text);
  ck_assert(back.ok());
  ck_assert(*back == placements);
  ck_assert(decode_placements("")->empty());
  const auto unbound = decode_placements("|||;|||");
  ck_assert(unbound.ok());
  ck_assert_uint_eq(unbound->size(), 2);
  CK_STR_EQ(describe_placement((*unbound)[0]), "cpus unbound");
  CK_STR_EQ(describe_placement(placements[2]), "gpu 0000:12:00.0 cpus 4-5 nic mlx5_1");
  CK_CONTAINS(decode_placements("0|a|0-1").error(), "'0|a|0-1' is not GPU|BUS_ID|CPUS|NIC");
  CK_CONTAINS(decode_placements("0|a|0-1|n|extra").error(), "is not GPU|BUS_ID|CPUS|NIC");
  CK_CONTAINS(decode_placements("0|a|3-1|").error(), "CPU list '3-1' is malformed");
}
END_TEST

START_TEST(batch_script_port_differs_from_the_steps) {
  const PortRange range{20000, 29999};
  const auto batch = derive_port(range, 4242, 0xfffffffb, 0);
  for (std::uint32_t step = 0; step < 150; ++step) ck_assert_uint_ne(batch, derive_port(range, 4242, step, 0));
}
END_TEST

Suite* plan_suite() {
  return make_suite(
      "plan", {plan_round_trips_through_the_environment, an_array_task_is_named_to_scontrol_by_array_and_task,
               plan_from_another_release_is_refused,
               plan_missing_or_inconsistent_is_refused, rank_layout_is_a_running_sum_in_node_order,
               port_is_deterministic_and_inside_the_range, steps_and_attempts_of_one_job_never_share_a_port,
               jobs_spread_over_the_range, workers_follow_mode_and_gpus, workers_cpu_and_gpu_errors_name_the_fix,
               tasks_per_node_expands_slurm_notation, task_shape_counts_are_slurms_tasks,
               batch_script_port_differs_from_the_steps, later_attempts_get_fresh_ports_unless_fixed,
               task_shape_gpu_per_task_is_refused_with_the_fix, placements_round_trip_through_their_one_text_form});
}
