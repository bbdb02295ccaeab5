// The straggler rule (job/straggler.hpp) and the load windows it
// judges (duties/load_watch.hpp), on values.
#include <string>
#include <vector>

#include "node/duties/load_watch.hpp"
#include "job/straggler.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;

namespace {

rdzv::Load load(std::vector<std::uint32_t> on_cpu, std::vector<std::uint32_t> waiting,
                std::optional<std::uint32_t> throttled = std::nullopt) {
  return {0, 5000, std::move(on_cpu), std::move(waiting), throttled};
}

std::vector<NodeSeat> seats(std::uint32_t n) {
  std::vector<NodeSeat> s;
  for (std::uint32_t i = 0; i < n; ++i)
    s.push_back({i, 2 * i, std::to_string(i) + " (n" + std::to_string(i) + ")", "n" + std::to_string(i)});
  return s;
}

}  // namespace

START_TEST(schedstat_and_windows) {
  const auto t = parse_schedstat("3003011841 17577310 95\n");
  ck_assert((t == SchedTimes{3003011841u, 17577310u}));
  ck_assert(!parse_schedstat("").has_value());
  const auto t0 = std::chrono::steady_clock::time_point{};
  LoadSample before{{SchedTimes{0, 0}, SchedTimes{0, 0}}, 1000, t0};
  LoadSample after{{SchedTimes{1000000000, 3000000000}, std::nullopt}, 3001000000, t0 + std::chrono::seconds(5)};
  const auto w = load_between(before, after, 2);
  ck_assert_uint_eq(w.attempt, 2);
  ck_assert_uint_eq(w.window_ms, 5000);
  ck_assert(w.on_cpu == (std::vector<std::uint32_t>{200, 0}));  // an ended worker is idle
  ck_assert(w.waiting == (std::vector<std::uint32_t>{600, 0}));
  ck_assert(w.throttled == 600u);
  ck_assert(w.nccl.empty());  // no collective-time files: no GPU figures
  const auto back = rdzv::Load::from_message(w.to_message());
  ck_assert(bool(back));
  ck_assert(*back == w);
  // GPU workers: their GPU's time in NCCL's collectives, when every one has figures in both samples.
  before.nccl = {NcclStats{10, 1000000000}, NcclStats{10, 0}};
  after.nccl = {NcclStats{90, 3500000000}, NcclStats{90, 250000000}};
  const auto gpu = load_between(before, after, 2);
  ck_assert(gpu.nccl == (std::vector<std::uint32_t>{500, 50}));
  const auto gpu_back = rdzv::Load::from_message(gpu.to_message());
  ck_assert(gpu_back && *gpu_back == gpu);
  after.nccl[1].reset();  // one worker has none (yet): none at all
  ck_assert(load_between(before, after, 2).nccl.empty());
}
END_TEST

START_TEST(a_node_that_never_waits_is_named_after_six_windows) {
  StragglerRule rule;
  const auto s = seats(3);
  // Node 1 is throttled: always busy; the others compute a third of the time and wait.
  const std::vector<rdzv::Load> window = {load({300, 250}, {20, 10}), load({220, 150}, {760, 300}, 740),
                                          load({280, 310}, {30, 20})};
  for (int i = 0; i < 5; ++i) ck_assert(rule.judge(s, window).empty());
  const auto named = rule.judge(s, window);
  ck_assert_uint_eq(named.size(), 1);
  ck_assert_uint_eq(named[0].seat.node, 1);
  ck_assert_uint_eq(named[0].local_rank, 0);
  ck_assert_uint_eq(named[0].mean_busy, 980);
  ck_assert_uint_eq(named[0].others_median, 325);
  const auto text = straggler_text(named[0]);
  CK_CONTAINS(text,
              "straggler: node 1 (n1) holds the others back (attempt 0): its rank 2 was busy 98% of the last "
              "30 s (in the last window: on a CPU 22%, waiting for one 76%); its cpu cgroup was throttled 74% "
              "of the time");
  CK_CONTAINS(text, "about 3.0x slower");
  CK_CONTAINS(straggler_json(named[0]),
              "{\"event\":\"straggler\",\"attempt\":0,\"node\":1,\"host\":\"n1\",\"rank\":2,");
  NodeSeat odd = named[0].seat;
  odd.host = "n\"1\\\n";
  StragglerVerdict quoted = named[0];
  quoted.seat = odd;
  CK_CONTAINS(straggler_json(quoted), "\"host\":\"n\\\"1\\\\\\n\"");
  odd.host = "n\xff" "1";  // not UTF-8: replaced, never thrown
  quoted.seat = odd;
  CK_CONTAINS(straggler_json(quoted), "\"host\":\"n\xef\xbf\xbd" "1\"");
  ck_assert(rule.judge(s, window).empty());  // once per attempt
  rule.reset();
  for (int i = 0; i < 5; ++i) ck_assert(rule.judge(s, window).empty());
  ck_assert_uint_eq(rule.judge(s, window).size(), 1);
}
END_TEST

START_TEST(healthy_and_noisy_windows_name_nobody) {
  StragglerRule rule;
  const auto s = seats(3);
  // Every node busy (compute-bound, no one waits): nobody stands out.
  const std::vector<rdzv::Load> busy = {load({900}, {60}), load({850}, {120}), load({880}, {90})};
  // Every node idle but one slightly more busy, under 70%.
  const std::vector<rdzv::Load> idle = {load({100}, {0}), load({500}, {100}), load({90}, {0})};
  for (int i = 0; i < 10; ++i) {
    ck_assert(rule.judge(s, busy).empty());
    ck_assert(rule.judge(s, idle).empty());
  }
  // Single windows 2.5x apart, as a shared 2-core node shows while healthy,
  // from a different node each time: the 30 s means stay close.
  const std::vector<rdzv::Load> noisy[] = {{load({860}, {0}), load({340}, {0}), load({500}, {0})},
                                           {load({340}, {0}), load({860}, {0}), load({500}, {0})},
                                           {load({500}, {0}), load({340}, {0}), load({860}, {0})}};
  for (int i = 0; i < 30; ++i) ck_assert(rule.judge(s, noisy[i % 3]).empty());
  // A node slow for 30 s that recovered in its last window is not slow now.
  rule.reset();
  const std::vector<rdzv::Load> slow = {load({300}, {0}), load({300}, {690}), load({300}, {0})};
  for (int i = 0; i < 5; ++i) ck_assert(rule.judge(s, slow).empty());
  ck_assert(rule.judge(s, {load({300}, {0}), load({300}, {0}), load({300}, {0})}).empty());
  // One node alone is never compared; a missing LOAD is no window.
  ck_assert(rule.judge(seats(1), {load({990}, {0})}).empty());
  ck_assert(rule.judge(s, {load({990}, {0})}).empty());
}
END_TEST

// A worker capped at 15% of a CPU shows 57-90% busy (its main thread waits on
// Gloo's thread part of the time), a healthy node 6-8%: it is named.
START_TEST(a_capped_node_busy_only_70_percent_is_named) {
  StragglerRule rule;
  const auto s = seats(2);
  const std::uint32_t capped[] = {77, 65, 90, 71, 77, 79};
  std::vector<StragglerVerdict> named;
  for (const auto busy : capped) {
    ck_assert(named.empty());
    named = rule.judge(s, {load({70}, {0}), load({100}, {busy * 10 - 100})});
  }
  ck_assert_uint_eq(named.size(), 1);
  ck_assert_uint_eq(named[0].seat.node, 1);
  ck_assert_uint_eq(named[0].mean_busy, 765);
  // Two healthy nodes sharing two busy cores: one 1.6x the other for 30 s
  // (65% against 40%) is noise with one other node to compare with.
  StragglerRule pair;
  for (int i = 0; i < 12; ++i) ck_assert(pair.judge(s, {load({400}, {0}), load({450}, {200})}).empty());
}
END_TEST

// On GPUs the figure is each node's worker least in NCCL's collectives: the
// slow GPU arrives last and waits least; the CPUs (CUDA's host thread spins)
// say nothing there.
START_TEST(a_gpu_that_waits_least_in_collectives_is_named) {
  StragglerRule rule;
  const auto s = seats(3);
  auto gpu = [](std::uint32_t in_collectives) {
    rdzv::Load l = load({990, 990}, {0, 0});  // the host threads spin
    l.nccl = {in_collectives + 10, in_collectives};
    return l;
  };
  const std::vector<rdzv::Load> window = {gpu(450), gpu(30), gpu(420)};
  for (int i = 0; i < 5; ++i) ck_assert(rule.judge(s, window).empty());
  const auto named = rule.judge(s, window);
  ck_assert_uint_eq(named.size(), 1);
  ck_assert_uint_eq(named[0].seat.node, 1);
  ck_assert_uint_eq(named[0].local_rank, 1);
  ck_assert(named[0].in_collectives == 30u);
  CK_CONTAINS(straggler_text(named[0]),
              "its rank 3's GPU was outside NCCL's collectives 97% of the last 30 s (in them 3% of the last window); "
              "the other nodes' ranks were outside them 57% (median)");
  CK_CONTAINS(straggler_json(named[0]), "\"in_collectives_permille\":30,");
  // The same spinning CPUs without GPU figures: every node equally busy, nobody named.
  StragglerRule cpu;
  const std::vector<rdzv::Load> spinning = {load({990}, {0}), load({990}, {0}), load({990}, {0})};
  for (int i = 0; i < 8; ++i) ck_assert(cpu.judge(s, spinning).empty());
}
END_TEST

Suite* straggler_suite() {
  return make_suite("straggler", {schedstat_and_windows, a_node_that_never_waits_is_named_after_six_windows,
                                  healthy_and_noisy_windows_name_nobody, a_capped_node_busy_only_70_percent_is_named,
                                  a_gpu_that_waits_least_in_collectives_is_named});
}
