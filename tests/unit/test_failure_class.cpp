// Failure classes (wire/failure_class.hpp) and the cgroup facts they use
// (node/cgroup.hpp), on values: v1 and v2 files as the kernel writes them.
#include <chrono>
#include <csignal>
#include <ctime>
#include <string>

#include "ddp/node/cgroup.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/failure_class.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "job/failure_text.hpp"
#include "job/job.hpp"
#include "slurm/job_report.hpp"
#include "slurm/time_limit_watch.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;

namespace {

Failure exited(int code, int sig, std::string tail) {
  Failure f;
  f.rank = 3;
  f.local_rank = 1;
  f.node = 1;
  f.host = "n1";
  f.exit_code = sig ? 128 + sig : code;
  f.signal = sig;
  f.stderr_tail = std::move(tail);
  return f;
}

// A hybrid machine (this project's CI VM): v1 controllers, an empty v2.
const char* kHybridMountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
const char* kHybridCgroup = "4:memory:/slurm/uid_0/job_7/step_0\n2:cpu,cpuacct:/slurm/uid_0/job_7\n0::/\n";
// A v2-only machine (Debian 12 with systemd's default).
const char* kUnifiedMountinfo = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
const char* kUnifiedCgroup = "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n";

}  // namespace

START_TEST(workers_are_classed_by_exit_and_stderr) {
  ck_assert(classify_worker(exited(0, SIGKILL, ""), true) == FailureClass::HostOom);
  ck_assert(classify_worker(exited(0, SIGKILL, ""), false) == FailureClass::Killed);
  ck_assert(classify_worker(exited(0, SIGSEGV, "Fatal Python error: Segmentation fault"), false) ==
            FailureClass::Crash);
  ck_assert(classify_worker(exited(0, SIGBUS, ""), false) == FailureClass::Crash);
  ck_assert(classify_worker(exited(1, 0, "Traceback (most recent call last):\nValueError: x\n"), false) ==
            FailureClass::Exception);
  ck_assert(classify_worker(exited(3, 0, "ddp-train: error: no data\n"), false) == FailureClass::Exit);
  // PyTorch's GPU OOM is an exception too, but its own class; checked before CUDA errors.
  ck_assert(classify_worker(exited(1, 0,
                                   "Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of "
                                   "memory. Tried to allocate 2.00 GiB\n"),
                            false) == FailureClass::GpuOom);
  ck_assert(classify_worker(exited(1, 0, "RuntimeError: CUDA error: an illegal memory access was encountered\n"),
                            false) == FailureClass::CudaNccl);
  ck_assert(classify_worker(exited(1, 0,
                                   "torch.distributed.DistBackendError: NCCL error in: ..., "
                                   "unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"),
                            false) == FailureClass::CudaNccl);
  ck_assert(classify_worker(exited(1, 0, "ddp-train: error: NCCL error at nccl.cu:12: ncclAllReduce\n"), false) ==
            FailureClass::CudaNccl);
  // OOM evidence only counts for SIGKILL (the OOM killer's signal).
  ck_assert(classify_worker(exited(1, 0, ""), true) == FailureClass::Exit);
}
END_TEST

START_TEST(the_class_decides_restart_and_blame) {
  ck_assert(policy_of(FailureClass::Exception).restart);
  ck_assert(!policy_of(FailureClass::Exception).blame_node);
  ck_assert(!policy_of(FailureClass::HostOom).blame_node);
  ck_assert(policy_of(FailureClass::CudaNccl).blame_node);
  ck_assert(policy_of(FailureClass::NodeLost).blame_node);
  ck_assert(!policy_of(FailureClass::SlurmStop).restart);
  ck_assert(!policy_of(FailureClass::Setup).restart);
  for (int c = 0; c <= int(FailureClass::Setup); ++c)
    ck_assert(class_from_name(class_name(FailureClass(c))) == FailureClass(c));
  ck_assert(!class_from_name("oom").has_value());
  CK_CONTAINS(class_line(FailureClass::HostOom), "class host_oom: out of host memory");
  CK_CONTAINS(class_line(FailureClass::CudaNccl), "; the node's fault");
}
END_TEST

START_TEST(failures_without_a_class_get_their_kinds) {
  Failure lost;
  lost.kind = FailureKind::NodeLost;
  ck_assert(class_of(lost) == FailureClass::NodeLost);
  Failure hung;
  hung.kind = FailureKind::Hung;
  ck_assert(class_of(hung) == FailureClass::Hang);
  Failure start;
  start.kind = FailureKind::StartFailed;
  ck_assert(class_of(start) == FailureClass::Setup);
  // A node's own class wins over what the coordinator would guess.
  Failure oom = exited(0, SIGKILL, "");
  oom.cls = FailureClass::HostOom;
  ck_assert(class_of(oom) == FailureClass::HostOom);
  RootCause cause;
  cause.failure = oom;
  CK_CONTAINS(describe(cause), "was killed by SIGKILL");
  CK_CONTAINS(describe(cause), "\n  class host_oom: ");
}
END_TEST

START_TEST(the_class_travels_in_fail_and_done) {
  Failure f = exited(0, SIGKILL, "");
  f.cls = FailureClass::HostOom;
  const auto back = rdzv::Fail::from_message(rdzv::Fail{f}.to_message());
  ck_assert(bool(back));
  ck_assert(back->failure == f);
  // An unknown class is an error naming it, like an unknown kind.
  auto m = rdzv::Fail{f}.to_message();
  m.set("class", "melted");
  const auto bad = rdzv::Fail::from_message(m);
  ck_assert(!bad);
  CK_CONTAINS(bad.error(), "unknown failure class 'melted'");
}
END_TEST

START_TEST(cgroup_dirs_on_v1_and_v2) {
  const auto mem = cgroup_dir(kHybridCgroup, kHybridMountinfo, "memory");
  ck_assert(mem.has_value());
  CK_STR_EQ(mem->dir, "/sys/fs/cgroup/memory/slurm/uid_0/job_7/step_0");
  const auto cpu = cgroup_dir(kHybridCgroup, kHybridMountinfo, "cpu");
  ck_assert(cpu.has_value());
  CK_STR_EQ(cpu->dir, "/sys/fs/cgroup/cpu,cpuacct/slurm/uid_0/job_7");
  const auto v2 = cgroup_dir(kUnifiedCgroup, kUnifiedMountinfo, "memory");
  ck_assert(v2.has_value());
  CK_STR_EQ(v2->dir, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0/user/task_0");
  const auto chain = cgroup_chain(*v2);
  ck_assert_uint_eq(chain.size(), 6);
  CK_STR_EQ(chain.back(), "/sys/fs/cgroup/system.slice");
  ck_assert(cgroup_chain({"/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory"}).empty());
  // A container's mount whose root is a sub-directory of the hierarchy.
  const auto inner = cgroup_dir("0::/ci/job/x\n", "30 23 0:26 /ci /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "cpu");
  ck_assert(inner.has_value());
  CK_STR_EQ(inner->dir, "/sys/fs/cgroup/job/x");
  ck_assert(!cgroup_dir("4:memory:/a\n", "", "memory").has_value());
}
END_TEST

START_TEST(cgroup_counters_on_v1_and_v2) {
  ck_assert(cgroup_counter("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", "oom_kill") == 2u);  // v1 oom_control
  ck_assert(cgroup_counter("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n", "oom_kill") == 1u);  // v2
  ck_assert(!cgroup_counter("oom_kill_disable 0\n", "oom_kill").has_value());
  ck_assert(!cgroup_counter("", "oom_kill").has_value());
  ck_assert(throttled_ns("nr_periods 22\nnr_throttled 20\nthrottled_time 1535371083\n") == 1535371083u);
  ck_assert(throttled_ns("usage_usec 9\nnr_throttled 3\nthrottled_usec 250\n") == 250000u);
  ck_assert(!throttled_ns("usage_usec 9\n").has_value());
}
END_TEST

START_TEST(the_verdict_goes_after_the_users_comment) {
  using ddp::agent::comment_with;
  CK_STR_EQ(comment_with("(null)", "ddp: x"), "ddp: x");  // squeue's word for no comment
  CK_STR_EQ(comment_with("", "ddp: x"), "ddp: x");
  CK_STR_EQ(comment_with("sweep 12", "ddp: x"), "sweep 12 | ddp: x");
  CK_STR_EQ(comment_with("sweep 12 | ddp: old", "ddp: new"), "sweep 12 | ddp: new");
  CK_STR_EQ(comment_with("ddp: old", "ddp: new"), "ddp: new");
  ck_assert_uint_eq(comment_with(std::string(1000, 'c'), "ddp: x").size(), 400);
}
END_TEST

START_TEST(slurm_stops_are_told_apart) {
  const auto slurm_stop_text = [](const std::string& line, int sig) {
    return ddp::agent::slurm_stop_text(*ddp::agent::job_fields_from_squeue(line), sig);
  };
  // As squeue prints them (STATE|END|PREEMPT|REASON) on 22.05 when SIGTERM comes.
  CK_CONTAINS(slurm_stop_text("COMPLETING|1795000000|N/A|TimeLimit", SIGTERM),
              "Slurm stopped the job: its time limit came (SIGTERM; JobState=COMPLETING Reason=TimeLimit)");
  CK_CONTAINS(slurm_stop_text("COMPLETING|1795000000|N/A|None", SIGTERM),
              "it was cancelled (scancel) or its batch script ended");
  CK_CONTAINS(slurm_stop_text("RUNNING|1795000000|N/A|None", SIGTERM), "Slurm stopped this step while the job goes on");
  CK_CONTAINS(slurm_stop_text("PREEMPTED|1795000000|N/A|None", SIGTERM), "it was preempted");
  // In its GraceTime a preempted job is still RUNNING; PreemptTime says it.
  CK_CONTAINS(slurm_stop_text("RUNNING|1795000000|1794999000|None", SIGTERM), "it was preempted");
  CK_CONTAINS(slurm_stop_text("RUNNING|1795000000|NOT_SET|None", SIGTERM), "while the job goes on");
}
END_TEST

START_TEST(the_time_limit_is_said_before_it_comes) {
  using ddp::agent::end_time_from_env;
  ck_assert(end_time_from_env("1795000000") == std::time_t(1795000000));
  ck_assert(!end_time_from_env(nullptr));
  ck_assert(!end_time_from_env(""));
  ck_assert(!end_time_from_env("0"));  // no limit
  ck_assert(!end_time_from_env("soon"));
  ck_assert(!end_time_from_env("-5"));
  const auto text = ddp::agent::time_limit_warning("12", std::chrono::seconds(45));
  CK_CONTAINS(text, "job 12 reaches its time limit in 45 s");
  CK_CONTAINS(text, "--time");
  CK_CONTAINS(text, "--ddp-requeue");
}
END_TEST

Suite* failure_class_suite() {
  return make_suite("failure_class", {workers_are_classed_by_exit_and_stderr, the_class_decides_restart_and_blame,
                                      failures_without_a_class_get_their_kinds, the_class_travels_in_fail_and_done,
                                      cgroup_dirs_on_v1_and_v2, cgroup_counters_on_v1_and_v2,
                                      the_verdict_goes_after_the_users_comment, slurm_stops_are_told_apart,
                                      the_time_limit_is_said_before_it_comes});
}
