// The pre-flight (rendezvous/preflight.hpp): the order of its checks, the
// rule that names a node, its words, and a node's helper answer read back
// (duties/preflight_checks.hpp), on values.
#include <map>
#include <string>
#include <vector>

#include "duties/preflight_checks.hpp"
#include "rendezvous/preflight.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;

namespace {

std::map<std::uint32_t, CheckResult> rates(const std::vector<double>& by_node) {
  std::map<std::uint32_t, CheckResult> r;
  for (std::uint32_t i = 0; i < by_node.size(); ++i) r[i] = CheckResult{by_node[i], ""};
  return r;
}

}  // namespace

START_TEST(nodes_of_one_host_take_turns_and_links_one_at_a_time) {
  // Four nodes on two hosts: two compute turns a round, both hosts at once.
  const auto turns = preflight_turns({"a", "a", "b", "b"}, 2, true);
  ck_assert_uint_eq(turns.size(), 2 * 2 + 2 * 3);
  ck_assert((turns[0] == PreflightTurn{Measure::Compute, {0, 2}}));
  ck_assert((turns[1] == PreflightTurn{Measure::Compute, {1, 3}}));
  ck_assert((turns[2] == PreflightTurn{Measure::Compute, {0, 2}}));  // the second round
  ck_assert((turns[4] == PreflightTurn{Measure::Network, {1}}));     // node 0 is every transfer's other end
  ck_assert((turns[9] == PreflightTurn{Measure::Network, {3}}));
  // Each node on its own machine: one compute turn a round; no network turns when asked for none.
  const auto apart = preflight_turns({"n0", "n1", "n2"}, 1, false);
  ck_assert_uint_eq(apart.size(), 1);
  ck_assert((apart[0].nodes == std::vector<std::uint32_t>{0, 1, 2}));
  // The best of the rounds: a rate over a failure, the higher rate.
  ck_assert((best_of(CheckResult{100, ""}, CheckResult{std::nullopt, "x"}) == CheckResult{100, ""}));
  ck_assert((best_of(CheckResult{std::nullopt, "x"}, CheckResult{80, ""}) == CheckResult{80, ""}));
  ck_assert((best_of(CheckResult{100, ""}, CheckResult{120, ""}) == CheckResult{120, ""}));
  ck_assert((best_of(CheckResult{std::nullopt, "first"}, CheckResult{std::nullopt, "second"}).failed == "first"));
}
END_TEST

START_TEST(a_node_far_below_the_others_is_named) {
  // The test cluster's figures: a 15% cpu quota, a 100 Mbit/s tbf.
  const auto compute = judge_preflight(Measure::Compute, rates({182400, 10900, 182900, 179600}));
  ck_assert_uint_eq(compute.size(), 1);
  ck_assert_uint_eq(compute[0].node, 1);
  ck_assert(compute[0].others_median == 182400);
  const auto text = preflight_text(compute[0], "1 (n1, 10.0.0.1)");
  CK_STR_EQ(text,
            "pre-flight: node 1 (n1, 10.0.0.1) computes slowly: its GEMM ran at 10.9 GFLOP/s, the other nodes' "
            "median 182.4 GFLOP/s (sd 1.5 GFLOP/s): 16.7x slower (named at 1.5x the median and 3 sd below it)");
  CK_STR_EQ(preflight_json(compute[0], "n\"1"),
            "{\"event\":\"preflight\",\"check\":\"compute\",\"node\":1,\"host\":\"n\\\"1\",\"rate\":10900.0,"
            "\"others_median\":182400.0,\"others_sd\":1452.2,\"unit\":\"MFLOP/s\"}");
  std::map<std::uint32_t, CheckResult> net{{1, {2406.9, ""}}, {2, {12.0, ""}}, {3, {2583.7, ""}}};
  const auto slow_link = judge_preflight(Measure::Network, net);
  ck_assert_uint_eq(slow_link.size(), 1);
  ck_assert_uint_eq(slow_link[0].node, 2);
  CK_CONTAINS(preflight_text(slow_link[0], "2"), "has a slow link: its transfer to node 0 ran at 12.0 MB/s");
  CK_STR_EQ(preflight_table(Measure::Network, net),
            "pre-flight network by node: 1=2406.9 MB/s 2=12.0 MB/s 3=2583.7 MB/s");
}
END_TEST

START_TEST(healthy_spread_and_too_few_nodes_name_nobody) {
  // Seen on the healthy test cluster: 1.4x between nodes at most, best of two rounds.
  ck_assert(judge_preflight(Measure::Compute, rates({162000, 169200, 124300, 174600})).empty());
  ck_assert(judge_preflight(Measure::Network, rates({2201.5, 1854.2, 2155.1})).empty());
  // 1.5x below, but within 3 sd of widely spread others: not named.
  ck_assert(judge_preflight(Measure::Compute, rates({100, 40, 60, 140, 30})).empty());
  // Two nodes: neither can be told from the other.
  ck_assert(judge_preflight(Measure::Compute, rates({100, 10})).empty());
}
END_TEST

START_TEST(a_failed_check_is_named_unless_every_node_failed) {
  std::map<std::uint32_t, CheckResult> r{{0, {100, ""}}, {1, {std::nullopt, "it did not finish within 30 s"}}};
  const auto named = judge_preflight(Measure::Compute, r);
  ck_assert_uint_eq(named.size(), 1);  // even of two nodes: a failure needs no comparison
  CK_STR_EQ(preflight_text(named[0], "1 (n1, 10.0.0.1)"),
            "pre-flight: node 1 (n1, 10.0.0.1) failed a check: its compute check failed: it did not finish within 30 s");
  CK_CONTAINS(preflight_json(named[0], "n1"), "\"failed\":\"it did not finish within 30 s\"}");
  // The check is broken everywhere (the binary gone): no node's fault.
  std::map<std::uint32_t, CheckResult> all{{0, {std::nullopt, "gone"}}, {1, {std::nullopt, "gone"}}};
  ck_assert(judge_preflight(Measure::Compute, all).empty());
}
END_TEST

START_TEST(the_helpers_answer_becomes_checked) {
  const auto ok = checked_from("compute", Command::Outcome{true, false, "mflops=41234"});
  ck_assert(ok.mflops == 41234u);
  ck_assert(ok.failed.empty());
  CK_CONTAINS(checked_from("compute", Command::Outcome{true, false, "hello"}).failed, "its helper said 'hello'");
  CK_STR_EQ(checked_from("compute", Command::Outcome{false, true, ""}).failed, "it did not finish within 30 s");
  CK_STR_EQ(checked_from("network", Command::Outcome{false, false, "cannot connect to node 0 (a:1): refused"}).failed,
            "cannot connect to node 0 (a:1): refused");
  const auto sent = checked_from("network", Command::Outcome{true, false, ""});
  ck_assert(sent.failed.empty() && !sent.mflops);  // node 0 times the bytes itself
}
END_TEST

Suite* preflight_suite() {
  return make_suite("preflight", {nodes_of_one_host_take_turns_and_links_one_at_a_time,
                                  a_node_far_below_the_others_is_named, healthy_spread_and_too_few_nodes_name_nobody,
                                  a_failed_check_is_named_unless_every_node_failed, the_helpers_answer_becomes_checked});
}
