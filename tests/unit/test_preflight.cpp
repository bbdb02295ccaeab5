// The pre-flight (job/preflight.hpp): the order of its checks, the
// rule that names a node, its words, and a node's helper answer read back
// (duties/preflight_checks.hpp), on values.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "node/duties/preflight_checks.hpp"
#include "node/duties/check_sink.hpp"
#include "ddp/wire/rdzv_auth.hpp"
#include "job/preflight.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;

namespace {

std::map<std::uint32_t, CheckResult> rates(const std::vector<double>& by_node) {
  std::map<std::uint32_t, CheckResult> r;
  for (std::uint32_t i = 0; i < by_node.size(); ++i) r[i] = CheckResult{by_node[i], ""};
  return r;
}

// A connection to the sink on loopback that sends `bytes` and shuts down its side.
int send_to(std::uint16_t port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  ck_assert_int_eq(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
  ::shutdown(fd, SHUT_WR);
  return fd;
}

std::vector<CheckSink::Received> received_within(EventLoop& loop, CheckSink& sink, std::size_t count) {
  std::vector<CheckSink::Received> all;
  for (int i = 0; i < 200 && all.size() < count; ++i) {
    ck_assert(loop.run_once(std::chrono::milliseconds(10)).ok());
    for (auto& r : sink.take_received()) all.push_back(std::move(r));
  }
  return all;
}

}  // namespace

START_TEST(nodes_of_one_host_take_turns_and_links_one_at_a_time) {
  // Four nodes on two hosts: two compute turns a round, both hosts at once.
  const auto turns = preflight_turns({"a", "a", "b", "b"}, 2, true);
  ck_assert((turns[0] == PreflightTurn{Measure::Compute, {0, 2}, {}}));
  ck_assert((turns[1] == PreflightTurn{Measure::Compute, {1, 3}, {}}));
  ck_assert((turns[2] == PreflightTurn{Measure::Compute, {0, 2}, {}}));  // the second round
  // The ring, shift 2 then 1: a host sends once and receives once a turn.
  ck_assert_uint_eq(turns.size(), 2 * 2 + 2 + 2);
  ck_assert((turns[4].transfers == std::vector<Transfer>{{0, 2}, {2, 0}}));
  ck_assert((turns[5].transfers == std::vector<Transfer>{{1, 3}, {3, 1}}));
  ck_assert((turns[6].transfers == std::vector<Transfer>{{0, 1}, {2, 3}}));  // a to a, b to b
  ck_assert((turns[7].transfers == std::vector<Transfer>{{1, 2}, {3, 0}}));
  // Each node on its own machine: one compute turn a round; no network turns when asked for none.
  const auto apart = preflight_turns({"n0", "n1", "n2"}, 1, false);
  ck_assert_uint_eq(apart.size(), 1);
  ck_assert((apart[0].nodes == std::vector<std::uint32_t>{0, 1, 2}));
  // 16,384 machines: one turn of transfers a round, every node sending and receiving, node 0 too.
  std::vector<std::string> hosts;
  for (int i = 0; i < 16384; ++i) hosts.push_back("n" + std::to_string(i));
  const auto big = preflight_turns(hosts, 2, true);
  ck_assert_uint_eq(big.size(), 2 + 2);
  ck_assert_uint_eq(big[2].transfers.size(), 16384);
  ck_assert((big[2].transfers[0] == Transfer{0, 8192}) && (big[3].transfers[16383] == Transfer{16383, 0}));
  // One machine (the test cluster): one transfer at a time, each node out to two others.
  const auto one = preflight_turns({"h", "h", "h"}, 2, true);
  ck_assert_uint_eq(one.size(), 2 * 3 + 2 * 3);
  ck_assert((one[6].transfers == std::vector<Transfer>{{0, 1}}) && (one[9].transfers == std::vector<Transfer>{{0, 2}}));
  ck_assert((ring_shifts(2, 2) == std::vector<std::uint32_t>{1, 1}));
  ck_assert((ring_shifts(3, 2) == std::vector<std::uint32_t>{1, 2}));
  ck_assert((ring_shifts(64, 2) == std::vector<std::uint32_t>{32, 1}));
  ck_assert(ring_shifts(1, 2).empty());
  // The best of the rounds: a rate over a failure, the higher rate.
  ck_assert((best_of(CheckResult{100, ""}, CheckResult{std::nullopt, "x"}) == CheckResult{100, ""}));
  ck_assert((best_of(CheckResult{std::nullopt, "x"}, CheckResult{80, ""}) == CheckResult{80, ""}));
  ck_assert((best_of(CheckResult{100, ""}, CheckResult{120, ""}) == CheckResult{120, ""}));
  ck_assert((best_of(CheckResult{std::nullopt, "first"}, CheckResult{std::nullopt, "second"}).failed == "first"));
  // A node's link: the worse of its best out and its best in, a failure the worst.
  const CheckResult out{900, "", "out"}, in{40, "", "in"}, lost{std::nullopt, "refused", "in"};
  ck_assert(link_result(out, in) == in);
  ck_assert(link_result(out, lost) == lost);
  ck_assert(link_result(out, std::nullopt) == out);
  ck_assert(link_result(std::nullopt, std::nullopt) == CheckResult{});
}
END_TEST

// The ring's figures become each node's: a slow sender is slow in both its
// transfers out, its receivers in one of theirs only (the best of two hides
// it).
START_TEST(a_slow_link_is_told_from_its_partners) {
  const auto t = [](std::uint32_t from, std::uint32_t to, double rate) {
    return TimedTransfer{{from, to}, CheckResult{rate, ""}};
  };
  // Four nodes, shift 2 then 1; node 2 sends at 12 MB/s, the rest about 2000.
  const std::vector<TimedTransfer> timed{t(0, 2, 2100), t(1, 3, 2000), t(2, 0, 12), t(3, 1, 1900),
                                         t(0, 1, 2050), t(1, 2, 1950), t(2, 3, 12), t(3, 0, 2010)};
  const auto links = link_results(timed);
  ck_assert_uint_eq(links.size(), 4);
  ck_assert((links.at(2) == CheckResult{12, "", "out"}));
  ck_assert((links.at(0) == CheckResult{2010, "", "in"}));  // its best out 2100, its best in (from 3) 2010: the worse
  ck_assert((links.at(3) == CheckResult{2000, "", "in"}));  // its best in (from 1) 2000 below its best out 2010
  const auto named = judge_preflight(Measure::Network, links);
  ck_assert_uint_eq(named.size(), 1);
  ck_assert_uint_eq(named[0].node, 2);
  CK_CONTAINS(preflight_text(named[0], "2"), "(named at 2.0x the median and 3 sd below it, or 10x)");
  // A transfer that failed: its ends' other transfers decide.
  auto failed = timed;
  failed[3].result = CheckResult{std::nullopt, "refused"};  // 3 to 1
  ck_assert(link_results(failed).at(3).rate.has_value());
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
            "median 182.4 GFLOP/s (sd 1.5 GFLOP/s): 16.7x slower (named at 1.5x the median and 3 sd below it, or 10x)");
  CK_STR_EQ(preflight_json(compute[0], "n\"1"),
            "{\"event\":\"preflight\",\"check\":\"compute\",\"node\":1,\"host\":\"n\\\"1\",\"rate\":10900.0,"
            "\"others_median\":182400.0,\"others_sd\":1452.2,\"unit\":\"MFLOP/s\"}");
  std::map<std::uint32_t, CheckResult> net{
      {0, {2311.0, "", "in"}}, {1, {2406.9, "", "out"}}, {2, {12.0, "", "out"}}, {3, {2583.7, "", "in"}}};
  const auto slow_link = judge_preflight(Measure::Network, net);
  ck_assert_uint_eq(slow_link.size(), 1);
  ck_assert_uint_eq(slow_link[0].node, 2);
  CK_CONTAINS(preflight_text(slow_link[0], "2"), "has a slow link: its transfers out ran at best at 12.0 MB/s, the other nodes' median 2406.9 MB/s");
  CK_CONTAINS(preflight_json(slow_link[0], "n2"), "\"unit\":\"MB/s\",\"side\":\"out\"}");
  net[2].side = "in";
  CK_CONTAINS(preflight_text(judge_preflight(Measure::Network, net)[0], "2"), "its transfers in ran at best at 12.0 MB/s");
  CK_STR_EQ(preflight_table(Measure::Network, net),
            "pre-flight network by node: 0=2311.0 MB/s 1=2406.9 MB/s 2=12.0 MB/s 3=2583.7 MB/s");
}
END_TEST

// Only the nodes named for a slow GEMM are checked again (a failed check and
// a slow link are not), one node per host at a time.
START_TEST(the_slow_gemms_are_checked_again_one_node_per_host) {
  const std::vector<std::string> hosts{"a", "a", "b", "b", "c"};
  // Nodes 1 and 3, on hosts a and b: one turn.
  std::vector<PreflightVerdict> slow{{1, Measure::Compute, CheckResult{100000.0, ""}, 180000, 900},
                                     {3, Measure::Compute, CheckResult{99000.0, ""}, 180000, 900}};
  auto again = confirmation_turns(hosts, slow);
  ck_assert_uint_eq(again.size(), 1);
  ck_assert(again[0].measure == Measure::Compute);
  ck_assert(again[0].nodes == (std::vector<std::uint32_t>{1, 3}));
  slow.push_back({0, Measure::Compute, CheckResult{std::nullopt, "no BLAS"}, 0, 0});  // failed: named as it is
  slow.push_back({4, Measure::Network, CheckResult{12.0, "", "out"}, 2400, 10});      // a link: not a GEMM
  slow.push_back({2, Measure::Compute, CheckResult{90000.0, ""}, 180000, 900});       // host b again: a turn of its own
  again = confirmation_turns(hosts, slow);
  ck_assert_uint_eq(again.size(), 2);
  ck_assert(again[0].nodes == (std::vector<std::uint32_t>{1, 3}));
  ck_assert(again[1].nodes == (std::vector<std::uint32_t>{2}));
  ck_assert(confirmation_turns(hosts, {}).empty());
}
END_TEST

START_TEST(healthy_spread_and_too_few_nodes_name_nobody) {
  // Healthy nodes that share a host's cores: up to 1.4x apart, best of two rounds.
  ck_assert(judge_preflight(Measure::Compute, rates({162000, 169200, 124300, 174600})).empty());
  ck_assert(judge_preflight(Measure::Network, rates({2201.5, 1854.2, 2155.1})).empty());
  // 1.5x below, but within 3 sd of widely spread others: not named.
  ck_assert(judge_preflight(Measure::Compute, rates({100, 40, 60, 140, 30})).empty());
  // A tenth of widely spread others' median is named all the same (the
  // sanitizer pass's slow agents spread healthy links by a third).
  const auto far = judge_preflight(Measure::Network, rates({300, 900, 1500, 12}));
  ck_assert_uint_eq(far.size(), 1);
  ck_assert_uint_eq(far[0].node, 3);
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
  const auto ok = checked_from("compute", "", Command::Outcome{true, false, "mflops=41234"});
  ck_assert(ok.mflops == 41234u);
  ck_assert(ok.failed.empty());
  CK_CONTAINS(checked_from("compute", "", Command::Outcome{true, false, "hello"}).failed, "its helper said 'hello'");
  CK_STR_EQ(checked_from("compute", "", Command::Outcome{false, true, ""}).failed, "it did not finish within 30 s");
  const std::string token(32, 'a');
  const auto refused = checked_from("network", token, Command::Outcome{false, false, "cannot connect (a:1): refused"});
  CK_STR_EQ(refused.failed, "cannot connect (a:1): refused");
  CK_STR_EQ(refused.token, token);  // node 0 knows which transfer failed
  const auto sent = checked_from("network", token, Command::Outcome{true, false, ""});
  ck_assert(sent.failed.empty() && !sent.mflops && !sent.kbps);  // the receiver times the bytes
}
END_TEST

// A node runs one check at a time: an order that comes while one runs waits
// for it (node 0 sends the next transfer once the receiver answered, which
// can be before the sender exited), a third is refused at once.
START_TEST(a_check_that_comes_while_one_runs_waits_for_it) {
  char dir[] = "/tmp/ddp-preflight-test-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const std::string helper = std::string(dir) + "/helper";
  {
    std::ofstream script(helper);
    script << "#!/bin/sh\nsleep 0.3\necho mflops=5\n";
  }
  ck_assert_int_eq(::chmod(helper.c_str(), 0755), 0);
  EventLoop loop;
  PreflightChecks checks(loop, helper, std::string(64, 'e'), "pf.1");
  const std::string token(32, 'd');
  ck_assert(!checks.start(rdzv::CheckCompute{300}));
  ck_assert(!checks.start(rdzv::CheckNetwork{"127.0.0.1", 9, token, 50}));  // waits
  const auto third = checks.start(rdzv::CheckCompute{300});
  ck_assert(third.has_value());
  CK_STR_EQ(third->failed, "an earlier check still runs");
  std::vector<rdzv::Checked> said;
  for (int i = 0; i < 300 && said.size() < 2; ++i) {
    for (auto& c : checks.poll()) said.push_back(std::move(c));
    ::usleep(10000);
  }
  ck_assert_uint_eq(said.size(), 2);
  ck_assert(said[0].what == "compute" && said[0].mflops == 5u);
  ck_assert(said[1].what == "network" && said[1].token == token && said[1].failed.empty());
  std::filesystem::remove_all(dir);
}
END_TEST

const std::string kSinkSecret(64, 's');

// A transfer's head line, as node 0's token and the sender's proof make it.
std::string head(const std::string& token) { return rdzv::transfer_head(kSinkSecret, "ck.0", token); }

// Every node's check sink answers every transfer that proved its head,
// however short (a starved sender's one read; none at all), and drops a
// line that is not one (a bare token, another step's proof, junk), so node 0
// never waits out a turn and a stranger never counts.
START_TEST(the_check_sink_answers_every_transfer) {
  EventLoop loop;
  CheckSink sink(loop, kSinkSecret, "ck.0");
  ck_assert(sink.listen(0).ok());
  ck_assert_uint_gt(sink.port(), 0);
  const std::string a(32, 'a'), b(32, 'b'), c(32, 'c'), d(32, 'd'), e(32, 'e');
  const int one_read = send_to(sink.port(), head(a) + std::string(64 << 10, 'x'));
  const int no_bytes = send_to(sink.port(), head(b));
  const int stranger = send_to(sink.port(), "GET / HTTP/1.0\r\n\r\n" + std::string(100, ' '));
  const int bare = send_to(sink.port(), d + "\n" + std::string(100, 'x'));  // a token without its proof
  const int other = send_to(sink.port(), rdzv::transfer_head(kSinkSecret, "ck.1", e) + "x");  // another step's
  // And one that comes in two reads, 20 ms apart: timed between them.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(sink.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const std::string first = head(c) + std::string(1000, 'x'), second(20000, 'y');
  ck_assert_int_eq(::send(fd, first.data(), first.size(), MSG_NOSIGNAL), ssize_t(first.size()));
  for (int i = 0; i < 10; ++i) ck_assert(loop.run_once(std::chrono::milliseconds(2)).ok());
  ::usleep(20000);
  ck_assert_int_eq(::send(fd, second.data(), second.size(), MSG_NOSIGNAL), ssize_t(second.size()));
  ::shutdown(fd, SHUT_WR);
  auto all = received_within(loop, sink, 3);
  std::map<std::string, std::optional<double>> by_token;
  for (const auto& r : all) by_token[r.token] = r.mb_per_s;
  ck_assert_uint_eq(by_token.size(), 3);  // the stranger's lines are no transfers
  ck_assert(by_token.count(a));         // answered (with a rate only if the head came in a read of its own)
  ck_assert(!by_token[b].has_value());  // answered, with no rate
  ck_assert(by_token[c].has_value() && *by_token[c] > 0 && *by_token[c] < 2.0);  // 20 kB in 20 ms or more: 1 MB/s at most
  char rest[8];
  for (const int closed : {stranger, bare, other}) ck_assert_int_eq(::read(closed, rest, sizeof rest), 0);  // at once
  for (const int open : {one_read, no_bytes, stranger, bare, other, fd}) ::close(open);
}
END_TEST

// Strangers' connections, as many as anybody cares to open while a transfer
// runs, never close it: it is answered with its rate, and the strangers that
// wait for their head are the ones that go.
START_TEST(a_flood_of_strangers_never_ends_a_transfer) {
  EventLoop loop;
  CheckSink sink(loop, kSinkSecret, "ck.0");
  ck_assert(sink.listen(0).ok());
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(sink.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const auto open_one = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_eq(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    return fd;
  };
  const std::string token(32, 'f');
  const int transfer = open_one();
  const std::string first = head(token) + std::string(1000, 'x');
  ck_assert_int_eq(::send(transfer, first.data(), first.size(), MSG_NOSIGNAL), ssize_t(first.size()));
  for (int i = 0; i < 5; ++i) ck_assert(loop.run_once(std::chrono::milliseconds(2)).ok());
  std::vector<int> strangers;
  for (int i = 0; i < 4 * int(CheckSink::kMaxWaiting); ++i) {  // idle, then each new one after the last
    strangers.push_back(open_one());
    ck_assert(loop.run_once(std::chrono::milliseconds(1)).ok());
  }
  const std::string more(20000, 'y');
  ck_assert_int_eq(::send(transfer, more.data(), more.size(), MSG_NOSIGNAL), ssize_t(more.size()));
  ::shutdown(transfer, SHUT_WR);
  const auto all = received_within(loop, sink, 1);
  ck_assert_uint_eq(all.size(), 1);
  CK_STR_EQ(all[0].token, token);
  ck_assert(all[0].mb_per_s.has_value());
  char rest[8];
  ck_assert_int_eq(::read(strangers.front(), rest, sizeof rest), 0);  // the oldest strangers went
  for (const int fd : strangers) ::close(fd);
  ::close(transfer);
}
END_TEST

Suite* preflight_suite() {
  return make_suite(
      "preflight",
      {nodes_of_one_host_take_turns_and_links_one_at_a_time, a_node_far_below_the_others_is_named,
       healthy_spread_and_too_few_nodes_name_nobody, a_failed_check_is_named_unless_every_node_failed,
       the_helpers_answer_becomes_checked, the_check_sink_answers_every_transfer, a_flood_of_strangers_never_ends_a_transfer,
       a_slow_link_is_told_from_its_partners,
       a_check_that_comes_while_one_runs_waits_for_it, the_slow_gemms_are_checked_again_one_node_per_host});
}
