// Node 0's decisions (agent/job/job.hpp), driven directly: no sockets, no
// clock. The table test walks every failure class through every case of
// restarts left, a spare and --ddp-min-nodes, and checks what node 0 does
// once every node has stopped: the same nodes again, a spare in the lost
// node's place, fewer nodes, or the verdict.
#include <csignal>
#include <string>
#include <vector>

#include "ddp/wire/failure_class.hpp"
#include "job/failure_text.hpp"
#include "job/job.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;
using Clock = std::chrono::steady_clock;

namespace {

// A step of `groups` nodes that run workers (2 each), `spares` more that wait.
NodePlan plan_of(std::uint32_t groups, std::uint32_t spares, std::uint32_t min_nodes, std::uint32_t restarts) {
  NodePlan plan;
  plan.run_id = "7.0";
  plan.nnodes = groups + spares;
  plan.groups = groups;
  plan.spares = spares;
  plan.min_nodes = min_nodes;
  plan.max_restarts = restarts;
  plan.master_addr = "10.0.0.0";
  return plan;
}

rdzv::Join join_of(std::uint32_t node) {
  rdzv::Join join;
  join.nproc = 2;
  join.host = "n" + std::to_string(node);
  join.addr = "10.0.0." + std::to_string(node);
  join.slurm_node = "n" + std::to_string(node);
  return join;
}

// A job driven by hand; the time moves only when a test moves it.
struct Run {
  job::Job job;
  Clock::time_point now{};
  explicit Run(const NodePlan& plan) : job(plan) {}
  std::vector<job::Action> on(const job::Event& event) { return job.on(event, now); }
  // Every node joins; START for attempt 0 must follow.
  void join_all() {
    std::vector<job::Action> last;
    for (std::uint32_t n = 0; n < job.size(); ++n) last = on(job::Joined{n, join_of(n)});
    ck_assert(!last.empty() && std::holds_alternative<job::Start>(last.back()));
  }
};

// `more` after `actions`.
void append(std::vector<job::Action>& actions, const std::vector<job::Action>& more) {
  actions.insert(actions.end(), more.begin(), more.end());
}

template <class A>
const A* find(const std::vector<job::Action>& actions) {
  for (const auto& a : actions)
    if (const auto* found = std::get_if<A>(&a)) return found;
  return nullptr;
}

Failure worker_failure(std::uint32_t rank, FailureClass cls) {
  Failure f;
  f.rank = rank;
  f.local_rank = rank % 2;
  f.exit_code = 3;
  f.time = "12:00:00";
  f.cls = cls;
  return f;
}

// Node 1's failure of class `cls` in attempt 0, as node 0 hears of it.
std::vector<job::Action> fail_node_1(Run& run, FailureClass cls) {
  switch (cls) {
    case FailureClass::NodeLost:
      return run.on(job::Silent{1, "no heartbeat for 5 s"});
    case FailureClass::NodeUnhealthy: {
      auto actions = run.on(job::Failed{1, worker_failure(2, FailureClass::Exit)});
      append(actions, run.on(job::Stopped{1, 0, "its HealthCheck /x failed: GPU 1: ECC errors"}));
      return actions;
    }
    case FailureClass::SlurmStop: {
      auto actions = run.on(job::Signalled{1, SIGTERM});
      run.on(job::Disconnected{1, "connection closed"});
      return actions;
    }
    case FailureClass::Setup: {
      Failure f = worker_failure(2, cls);
      f.kind = FailureKind::StartFailed;
      f.cls.reset();  // a node's start failure carries none: its kind says
      f.exit_code = 127;
      f.detail = "cannot execute /no/such/train.py: No such file or directory";
      return run.on(job::Failed{1, f});
    }
    case FailureClass::Hang: {
      Failure f = worker_failure(2, cls);
      f.kind = FailureKind::Hung;
      f.cls.reset();
      f.hang = HangFacts{10000, 1000, StalledIn::elsewhere, 49, false, {2, 3}, {}, false};
      ck_assert(run.on(job::Failed{1, f}).empty());  // node 0's report may still come
      run.now += std::chrono::seconds(5);  // the other nodes' reports weighed until the deadline
      return run.on(job::Tick{});
    }
    default:
      return run.on(job::Failed{1, worker_failure(2, cls)});
  }
}

enum class Outcome { Restart, Spare, Shrink, Verdict };
const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Restart: return "restart on the same nodes";
    case Outcome::Spare: return "restart with the spare";
    case Outcome::Shrink: return "restart on fewer nodes";
    case Outcome::Verdict: return "the verdict";
  }
  return "?";
}

// What each class means for the run (doc/failures.md's table).
struct ClassRule {
  FailureClass cls;
  bool restarts;   // --ddp-restarts applies
  bool node_out;   // the node is out of the run (lost, or taken out)
};
constexpr ClassRule kClassRules[] = {
    {FailureClass::Exception, true, false},  {FailureClass::Exit, true, false},
    {FailureClass::HostOom, true, false},    {FailureClass::GpuOom, true, false},
    {FailureClass::CudaNccl, true, false},   {FailureClass::Crash, true, false},
    {FailureClass::Killed, true, false},     {FailureClass::Hang, true, false},
    {FailureClass::NodeLost, true, true},    {FailureClass::NodeUnhealthy, true, true},
    {FailureClass::SlurmStop, false, false}, {FailureClass::Setup, false, false},
};

// The restart rule as a user reads it in doc/failures.md.
Outcome expected(const ClassRule& rule, bool restart_left, bool spare, bool min_nodes) {
  if (!rule.restarts || !restart_left) return Outcome::Verdict;
  if (!rule.node_out) return Outcome::Restart;
  if (spare) return Outcome::Spare;
  return min_nodes ? Outcome::Shrink : Outcome::Verdict;
}

}  // namespace

// Every failure class x restarts left x a spare x --ddp-min-nodes: node 1 of
// two fails in attempt 0; once every node still running has stopped, node 0
// restarts on the same nodes, with the spare, on fewer nodes, or ends the run
// with the failure's class in its verdict.
START_TEST(every_class_restarts_swaps_shrinks_or_ends_as_its_policy_says) {
  int rows = 0;
  for (const auto& rule : kClassRules)
    for (const bool restart_left : {false, true})
      for (const bool spare : {false, true})
        for (const bool min_nodes : {false, true}) {
          ++rows;
          Run run(plan_of(2, spare ? 1 : 0, min_nodes ? 1 : 0, restart_left ? 1 : 0));
          run.join_all();
          auto actions = fail_node_1(run, rule.cls);
          ck_assert_msg(find<job::Stop>(actions), "%s: no STOP", class_name(rule.cls));
          for (std::uint32_t n = 0; n < run.job.size(); ++n)
            if (!run.job.node(n).lost) append(actions, run.on(job::Stopped{n, 0, ""}));
          Outcome got = Outcome::Verdict;
          if (find<job::Start>(actions)) {
            std::vector<std::uint32_t> nodes;
            for (const auto& g : run.job.roster()->groups) nodes.push_back(g.node);
            got = nodes == std::vector<std::uint32_t>{0, 1}   ? Outcome::Restart
                  : nodes == std::vector<std::uint32_t>{0, 2} ? Outcome::Spare
                  : nodes == std::vector<std::uint32_t>{0}    ? Outcome::Shrink
                                                              : Outcome::Verdict;
            ck_assert_int_eq(find<job::Start>(actions)->attempt, 1);
          } else {
            const auto* done = find<job::Done>(actions);
            ck_assert_msg(done && done->verdict.cause, "%s: neither START nor DONE", class_name(rule.cls));
            const auto cls = class_of(done->verdict.cause->failure);
            ck_assert_msg(cls == rule.cls, "the verdict's class is %s, not %s", class_name(cls), class_name(rule.cls));
          }
          const Outcome want = expected(rule, restart_left, spare, min_nodes);
          ck_assert_msg(got == want, "%s, %s restart left, %s spare, %s: %s, expected %s", class_name(rule.cls),
                        restart_left ? "a" : "no", spare ? "a" : "no", min_nodes ? "--ddp-min-nodes=1" : "no minimum",
                        outcome_name(got), outcome_name(want));
        }
  ck_assert_int_eq(rows, 12 * 2 * 2 * 2);
}
END_TEST

// A command that cannot be executed is a setup failure: the verdict at once,
// naming it and its class, with restarts left and nothing restarted.
START_TEST(a_command_that_cannot_be_executed_ends_the_run_without_a_restart) {
  Run run(plan_of(2, 0, 0, 3));
  run.join_all();
  auto actions = fail_node_1(run, FailureClass::Setup);
  for (std::uint32_t n = 0; n < 2; ++n) append(actions, run.on(job::Stopped{n, 0, ""}));
  ck_assert(!find<job::Start>(actions));
  const auto* done = find<job::Done>(actions);
  ck_assert(done && done->verdict.cause);
  ck_assert_int_eq(done->verdict.exit_code(), 127);
  const auto text = describe(*done->verdict.cause);
  CK_CONTAINS(text, "could not be started: cannot execute /no/such/train.py: No such file or directory");
  CK_CONTAINS(text, "class setup: the step could not begin; no restart");
}
END_TEST

// A setup failure marks its attempt for good: a node lost while the others
// stop becomes the root cause (it may explain the rest), but the run does
// not restart on the spare only to meet the same failure again.
START_TEST(a_setup_failure_is_not_restarted_when_a_node_is_lost_meanwhile) {
  Run run(plan_of(3, 1, 0, 3));
  run.join_all();
  auto actions = fail_node_1(run, FailureClass::Setup);
  append(actions, run.on(job::Silent{2, "no heartbeat for 5 s"}));
  for (const std::uint32_t n : {0u, 1u}) append(actions, run.on(job::Stopped{n, 0, ""}));
  ck_assert(!find<job::Start>(actions));
  const auto* done = find<job::Done>(actions);
  ck_assert(done && done->verdict.cause);
  const auto text = describe(*done->verdict.cause);
  CK_CONTAINS(text, "node 2 (n2, 10.0.0.2) was lost");
  CK_CONTAINS(text, "could not be started: cannot execute /no/such/train.py");
}
END_TEST

// A node blamed twice (its own CUDA error in two attempts) is taken out
// before the third: the spare takes its group, and it is a bad node (a
// requeue keeps it out, the site's hook hears of it).
START_TEST(a_node_blamed_twice_is_taken_out_for_the_spare) {
  Run run(plan_of(2, 1, 0, 3));
  run.join_all();
  for (std::uint32_t attempt = 0; attempt < 2; ++attempt) {
    auto f = worker_failure(2, FailureClass::CudaNccl);
    f.attempt = attempt;
    run.on(job::Failed{1, f});
    std::vector<job::Action> actions;
    for (std::uint32_t n = 0; n < 2; ++n) actions = run.on(job::Stopped{n, attempt, ""});
    const auto* start = find<job::Start>(actions);
    ck_assert(start);
    ck_assert_int_eq(start->attempt, attempt + 1);
  }
  ck_assert(run.job.node(1).lost);
  ck_assert_uint_eq(run.job.roster()->groups[1].node, 2);
  ck_assert_uint_eq(run.job.bad_nodes().size(), 1);
  CK_STR_EQ(run.job.bad_nodes()[0].node, "n1");
  CK_CONTAINS(run.job.bad_nodes()[0].reasons, "blamed twice (cuda_nccl in attempt 0; cuda_nccl in attempt 1)");
}
END_TEST

// After a hang notice, another node's plain failure is the hang's
// consequence: no STOP for it; the hang's report decides.
START_TEST(a_failure_after_a_hang_notice_waits_for_the_hang_report) {
  Run run(plan_of(2, 0, 0, 0));
  run.join_all();
  run.on(job::HangNoticed{1, 0});
  ck_assert(run.on(job::Failed{0, worker_failure(0, FailureClass::Exit)}).empty());
  Failure hang = worker_failure(2, FailureClass::Hang);
  hang.kind = FailureKind::Hung;
  hang.hang = HangFacts{10000, 1000, StalledIn::elsewhere, 49, false, {2}, {3}, false};
  const auto actions = run.on(job::Failed{1, hang});
  ck_assert(find<job::Stop>(actions));  // every node has reported: decided at once
}
END_TEST

// Slurm's stop heard from a node whose agent then leaves: the verdict is
// Slurm's stop, never a lost node, and nothing restarts.
START_TEST(slurms_stop_is_never_a_lost_node) {
  Run run(plan_of(3, 0, 0, 3));
  run.join_all();
  run.on(job::Signalled{2, SIGTERM});
  run.on(job::Disconnected{2, "connection closed"});
  run.on(job::Stopped{0, 0, ""});
  const auto actions = run.on(job::Stopped{1, 0, ""});
  const auto* done = find<job::Done>(actions);
  ck_assert(done && done->verdict.cause);
  ck_assert_int_eq(int(class_of(done->verdict.cause->failure)), int(FailureClass::SlurmStop));
  ck_assert_int_eq(done->verdict.exit_code(), 128 + SIGTERM);
  ck_assert(!run.job.node(2).lost);
}
END_TEST

// Every node finished: DONE with success; the nodes that finished first were
// told they may leave (BYE), node 0 stays to host the coordinator.
START_TEST(every_node_finished_is_a_success) {
  Run run(plan_of(3, 0, 0, 0));
  run.join_all();
  const auto first = run.on(job::Finished{2, 0});
  ck_assert(find<job::Release>(first) && find<job::Release>(first)->node == 2);
  ck_assert(run.on(job::Finished{0, 0}).empty());
  const auto last = run.on(job::Finished{1, 0});
  ck_assert(find<job::Done>(last) && !find<job::Done>(last)->verdict.cause);
}
END_TEST

// The rendezvous: a node that never arrives ends it at the timeout, naming
// it; a node of another release ends it at once.
START_TEST(the_rendezvous_names_who_did_not_arrive) {
  Run run(plan_of(3, 0, 0, 0));
  run.on(job::Joined{0, join_of(0)});
  run.on(job::Joined{2, join_of(2)});
  const auto timed_out = run.on(job::RendezvousTimedOut{std::chrono::seconds(60)});
  const auto* done = find<job::Done>(timed_out);
  ck_assert(done && done->verdict.cause);
  CK_STR_EQ(describe(*done->verdict.cause),
            "rendezvous timed out after 60 s: 1 node(s) did not arrive: 1 (2 of 3 arrived); each missing node's "
            "agent says what it tried");
  Run other(plan_of(2, 0, 0, 0));
  const auto other_release = other.on(job::OtherRelease{"node 1 runs slurm-ddp 9.9"});
  const auto* refused = find<job::Done>(other_release);
  ck_assert(refused && refused->verdict.cause);
  CK_CONTAINS(describe(*refused->verdict.cause), "node 1 runs slurm-ddp 9.9");
}
END_TEST

// A node's agent that left before its JOIN (it gave the port up just as
// node 0 admitted it) is not lost: it comes back, joins, and the job starts.
START_TEST(a_node_that_leaves_before_it_joined_is_not_lost) {
  Run run(plan_of(2, 0, 0, 0));
  run.on(job::Joined{0, join_of(0)});
  ck_assert(run.on(job::Disconnected{1, "connection closed by the peer"}).empty());
  ck_assert(!run.job.refusal(1));
  const auto joined = run.on(job::Joined{1, join_of(1)});
  ck_assert(find<job::Start>(joined));
}
END_TEST

Suite* job_suite() {
  return make_suite("job", {every_class_restarts_swaps_shrinks_or_ends_as_its_policy_says,
                            a_command_that_cannot_be_executed_ends_the_run_without_a_restart,
                            a_setup_failure_is_not_restarted_when_a_node_is_lost_meanwhile,
                            a_node_blamed_twice_is_taken_out_for_the_spare,
                            a_failure_after_a_hang_notice_waits_for_the_hang_report, slurms_stop_is_never_a_lost_node,
                            every_node_finished_is_a_success, the_rendezvous_names_who_did_not_arrive,
                            a_node_that_leaves_before_it_joined_is_not_lost});
}
