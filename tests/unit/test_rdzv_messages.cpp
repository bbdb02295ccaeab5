// The rendezvous messages (ddp/wire/rdzv_messages.hpp): every struct survives
// its own line, reads strictly, and a failure (ddp/wire/failure.hpp) is worded
// in one place, the same way wherever it is printed.
#include <string>

#include "ddp/wire/failure.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "job/failure_text.hpp"
#include "suites.hpp"

using namespace ddp;
using namespace ddp::agent;
using namespace ddp::rdzv;

namespace {

// Through the wire: to_message, the line, decode, from_message.
template <class T>
T through_the_wire(const T& m) {
  const auto line = encode(m.to_message());
  ck_assert_msg(!line.empty(), "a %s that does not fit a line", m.to_message().verb.c_str());
  const auto decoded = decode(line.substr(0, line.size() - 1));
  ck_assert_msg(decoded.ok(), "%s", decoded.ok() ? "" : decoded.error().c_str());
  const auto back = T::from_message(*decoded);
  ck_assert_msg(back.ok(), "%s", back.ok() ? "" : back.error().c_str());
  return *back;
}

Failure worker_failure() {
  Failure f;
  f.attempt = 2;
  f.node = 3;
  f.host = "gpu017";
  f.addr = "10.0.0.17";
  f.rank = 13;
  f.local_rank = 1;
  f.time = "12:00:01";
  f.exit_code = 137;
  f.signal = 9;
  f.stderr_tail = "Traceback (most recent call last):\n  oom = x * y\nMemoryError: 100% = full\n";
  f.error_file = "/tmp/ddp-agent-1000-7/attempt_2/rank_13/error.json";
  return f;
}

Failure hang_failure() {
  Failure f = worker_failure();
  f.kind = FailureKind::Hung;
  f.signal = 0;
  f.exit_code = 134;
  f.hang = HangFacts{10000, 1700000000123, StalledIn::elsewhere, 41, false, {13, 12}, {14, 15}, true};
  return f;
}

}  // namespace

START_TEST(every_message_survives_its_own_line) {
  const Challenge challenge{kProtocolVersion, "0.1.0", "4242.0", std::string(64, 'a')};
  ck_assert(through_the_wire(challenge) == challenge);
  const Response response{7, std::string(64, 'b'), std::string(64, 'c'), kProtocolVersion, "0.1.0"};
  ck_assert(through_the_wire(response) == response);
  ck_assert(through_the_wire(Welcome{std::string(64, 'd')}) == Welcome{std::string(64, 'd')});
  ck_assert(through_the_wire(Refused{"node 1 has already joined"}) == Refused{"node 1 has already joined"});
  ck_assert(through_the_wire(Elsewhere{"step 42.7"}) == Elsewhere{"step 42.7"});
  const Join join{4, {{"0", "0000:18:00.0", "0-3", "mlx5_0"}, {"1", "0000:98:00.0", "32-35", ""}}, "gpu017",
                  "10.0.0.17", "gpu017", 41234};
  ck_assert(through_the_wire(join) == join);
  const Join standalone{1, {}, "vm", "127.0.0.1", ""};  // no Slurm name: the field stays off the wire
  ck_assert(through_the_wire(standalone) == standalone);
  CK_STR_EQ(encode(standalone.to_message()), "JOIN nproc=1 workers= host=vm addr=127.0.0.1\n");  // no check port either
  ck_assert(through_the_wire(Heartbeat{}) == Heartbeat{});
  for (const auto& f : {worker_failure(), hang_failure()}) ck_assert(through_the_wire(Fail{f}) == Fail{f});
  ck_assert(through_the_wire(Hanging{3}) == Hanging{3});
  ck_assert(through_the_wire(Stopped{3, ""}) == (Stopped{3, ""}));
  ck_assert(through_the_wire(Stopped{3, "its HealthCheck failed"}) == (Stopped{3, "its HealthCheck failed"}));
  ck_assert(through_the_wire(Finished{5}) == Finished{5});
  ck_assert(through_the_wire(Signalled{15}) == Signalled{15});
  ck_assert(!decode_report(Message{"SIGNALLED", {}}.set("signal", std::uint64_t(0))).ok());  // no signal 0
  const Start start{1, "10.0.0.1", 29501, {0, 1, 2, 5}, {8, 8, 8, 4}};
  ck_assert(through_the_wire(start) == start);
  ck_assert(through_the_wire(Stop{4}) == Stop{4});
  ck_assert(through_the_wire(Bye{}) == Bye{});
  ck_assert(through_the_wire(CheckCompute{500}) == CheckCompute{500});
  const CheckNetwork net{"10.0.0.1", 29500, std::string(32, 'e'), 250};
  ck_assert(through_the_wire(net) == net);
  const Checked rate{"compute", 41234, ""}, failed{"network", std::nullopt, "cannot connect", std::string(32, 'f')};
  const Checked received{"network", std::nullopt, "", std::string(32, '0'), 2406900};
  ck_assert(through_the_wire(rate) == rate);
  ck_assert(through_the_wire(failed) == failed);
  ck_assert(through_the_wire(received) == received);
}
END_TEST

START_TEST(done_carries_the_whole_root_cause) {
  ck_assert(through_the_wire(Done{}) == Done{});
  CK_STR_EQ(encode(Done{}.to_message()), "DONE\n");  // success: nothing to say
  RootCause cause;
  cause.failure = hang_failure();
  cause.attempts = 3;
  cause.also_stalled = {{0, {0, 1, 2, 3}}, {5, {40}}};
  cause.related = worker_failure();
  cause.restarts_exhausted = 2;
  cause.left = {"2 (n2, 10.0.0.2)", "4 (weird;host, ?)"};
  const Done done{Verdict{cause}};
  const auto back = through_the_wire(done);
  ck_assert(back == done);
  ck_assert_int_eq(back.verdict.exit_code(), 134);
}
END_TEST

START_TEST(messages_read_strictly) {
  const auto error = [](const std::string& line, auto read) {
    const auto m = decode(line);
    ck_assert_msg(m.ok(), "%s", line.c_str());
    const auto r = read(*m);
    ck_assert_msg(!r.ok(), "'%s' was accepted", line.c_str());
    return r.error();
  };
  CK_CONTAINS(error("JOIN nproc=2 host=h", Join::from_message), "JOIN: the field 'addr' is missing");
  CK_CONTAINS(error("JOIN nproc=0 host=h addr=a workers=", Join::from_message), "JOIN nproc");
  CK_CONTAINS(error("JOIN nproc=1 host=h addr=a workers=0%7Cx%7C0-3", Join::from_message), "is not GPU|BUS_ID|CPUS|NIC");
  CK_CONTAINS(error("START attempt=0 master_addr=a master_port=1 groups=0,1 counts=2", Start::from_message),
              "START names 2 group(s) but gives 1 worker count(s)");
  CK_CONTAINS(error("START attempt=0 master_addr= master_port=1 groups=0 counts=2", Start::from_message),
              "master_addr is empty");
  CK_CONTAINS(error("FAIL kind=exploded attempt=0 node=0 code=1", Fail::from_message), "unknown failure kind");
  CK_CONTAINS(error("FAIL kind=worker_exited attempt=0 node=0 code=300", Fail::from_message), "FAIL code");
  CK_CONTAINS(error("DONE kind=setup attempt=0 node=0 code=1 attempts=1 related=GARBAGE", Done::from_message),
              "DONE related");
  CK_CONTAINS(error("STOP", Stop::from_message), "STOP: the field 'attempt' is missing");
  CK_CONTAINS(error("STOP attempt=1", Start::from_message), "expected START, got STOP");
  CK_CONTAINS(error("CHECKNET addr=a port=1 token=xyz ms=250", CheckNetwork::from_message), "32 hex digits");
  CK_CONTAINS(error("CHECKED what=disk", Checked::from_message), "CHECKED: what='disk'");
  CK_CONTAINS(error("CHECKED what=network token=abc kbps=1", Checked::from_message), "32 hex digits");
  CK_CONTAINS(error("CHECKED what=network kbps=1", Checked::from_message), "a rate without its transfer's token");
  CK_CONTAINS(error("CHECKCPU ms=0", CheckCompute::from_message), "CHECKCPU ms");
  // By verb: each direction has its own.
  ck_assert(decode_report(*decode("HB")).ok() && decode_order(*decode("HB")).ok());
  CK_CONTAINS(decode_report(*decode("STOP attempt=1")).error(), "an agent does not send STOP");
  CK_CONTAINS(decode_order(*decode("JOIN nproc=1 host=h addr=a workers=")).error(),
              "the coordinator does not send JOIN");
  ck_assert(std::holds_alternative<Join>(*decode_report(*decode("JOIN nproc=1 host=h addr=a workers="))));
  ck_assert(std::holds_alternative<CheckCompute>(*decode_order(*decode("CHECKCPU ms=500"))));
  CK_CONTAINS(decode_report(*decode("CHECKCPU ms=500")).error(), "an agent does not send CHECKCPU");
  ck_assert(std::holds_alternative<Checked>(*decode_report(*decode("CHECKED what=compute mflops=7"))));
}
END_TEST

// A stderr tail of any bytes: FAIL and DONE shorten it, keeping its newest
// part, until the line fits; nothing else is given up.
START_TEST(a_long_tail_is_shortened_to_fit_one_line) {
  Failure f = worker_failure();
  f.stderr_tail = std::string(6000, '\x01') + "the last line\n";  // percent-encoded: three bytes each
  const auto line = encode(Fail{f}.to_message());
  ck_assert(!line.empty() && line.size() <= rdzv::kMaxLineBytes + 1);
  const auto back = Fail::from_message(*decode(line.substr(0, line.size() - 1)));
  ck_assert(back.ok());
  ck_assert(back->failure.stderr_tail.starts_with("..."));
  ck_assert(back->failure.stderr_tail.ends_with("the last line\n"));
  CK_STR_EQ(back->failure.error_file, f.error_file);
}
END_TEST

// DONE carries the root cause and a related failure, each with its tail:
// both long, the line still fits and both keep their newest lines.
START_TEST(a_verdict_with_two_long_tails_fits_one_line) {
  Failure f = worker_failure();
  f.stderr_tail = std::string(6000, '%') + "the culprit's last line\n";
  Failure related = worker_failure();
  related.stderr_tail = std::string(6000, '\x01') + "the related last line\n";
  RootCause cause{f, 2, {}, related, std::nullopt, {}};
  const auto line = encode(Done{Verdict{cause}}.to_message());
  ck_assert_msg(!line.empty(), "DONE did not fit one line");
  ck_assert(line.size() <= rdzv::kMaxLineBytes + 1);
  const auto back = Done::from_message(*decode(line.substr(0, line.size() - 1)));
  ck_assert(back.ok() && back->verdict.cause);
  ck_assert(back->verdict.cause->failure.stderr_tail.ends_with("the culprit's last line\n"));
  ck_assert(back->verdict.cause->related);
  ck_assert(back->verdict.cause->related->stderr_tail.ends_with("the related last line\n"));
}
END_TEST

// The node 0 that refuses another release says so naming both.
START_TEST(a_version_refusal_names_both_versions) {
  const Response old{2, "", "", kProtocolVersion - 1, "0.0.9"};
  const auto why = refusal_for_version(2, "from 10.0.0.2", old);
  CK_CONTAINS(why, "node 2 (from 10.0.0.2) runs slurm-ddp 0.0.9 (rendezvous protocol " +
                       std::to_string(kProtocolVersion - 1) + ") but node 0 runs slurm-ddp ");
  CK_CONTAINS(why, "(protocol " + std::to_string(kProtocolVersion) + "): install the same slurm-ddp release");
}
END_TEST

// Agents of protocol 3 (the older release) leave at a CHALLENGE whose
// version is not 3 and send a RESPONSE without one: the handshake is read so
// that both sides of a step with such a node name it at once.
START_TEST(the_handshake_reads_protocol_3_and_4_peers) {
  Challenge mine;
  mine.release = "x";
  mine.run = "1.0";
  mine.nonce = std::string(64, 'a');
  const auto line = encode(mine.to_message());
  CK_CONTAINS(line, "CHALLENGE version=3 protocol=" + std::to_string(kProtocolVersion) + " ");
  ck_assert_uint_eq(through_the_wire(mine).version, kProtocolVersion);
  const auto of = [](const std::string& text) { return Challenge::from_message(*decode(text)); };
  ck_assert_uint_eq(of("CHALLENGE version=4 release=0.1.0 run=1.0 nonce=ab")->version, 4);  // protocol 4's form
  ck_assert_uint_eq(of("CHALLENGE version=3 run=1.0 nonce=ab")->version, 3);                // protocol 3's
  const auto old = Response::from_message(*decode("RESPONSE node=1 cnonce=ab mac=cd"));
  ck_assert(old.ok());
  ck_assert_uint_eq(old->version, 3);
  CK_CONTAINS(refusal_for_version(1, "from 10.0.0.2", *old),
              "node 1 (from 10.0.0.2) runs slurm-ddp of an older release (rendezvous protocol 3) but node 0 runs");
}
END_TEST

// The words the user reads, one case per kind (the integration tests grep
// these: fail_fast, hang, restarts, node_loss).
START_TEST(each_kind_of_failure_is_worded_once) {
  RootCause cause;
  cause.failure = worker_failure();
  cause.attempts = 3;
  CK_STR_EQ(describe(cause),
            "worker rank 13 (local rank 1) on node 3 (gpu017) was killed by SIGKILL at 12:00:01 in attempt 2 of 3; "
            "last lines of its stderr:\n  | Traceback (most recent call last):\n  |   oom = x * y\n"
            "  | MemoryError: 100% = full\n  details: /tmp/ddp-agent-1000-7/attempt_2/rank_13/error.json\n  class "
            "killed: killed from outside (a signal not of its own making); --ddp-restarts applies; not the node's "
            "fault");
  cause.failure.signal = 0;
  cause.failure.exit_code = 3;
  cause.failure.attempt = 0;
  CK_STR_EQ(first_line(cause.failure, 3), "worker rank 13 (local rank 1) on node 3 (gpu017) exited with code 3 at "
                                          "12:00:01");
  CK_STR_EQ(what_happened(cause.failure), "exited with code 3");

  cause.failure = hang_failure();
  cause.failure.attempt = 0;
  cause.also_stalled = {{0, {0, 1}}, {5, {40}}};
  const auto hang = describe(cause);
  CK_CONTAINS(hang, "worker rank 13 (local rank 1) on node 3 (gpu017) hung: no progress for 10 s (--ddp-hang-timeout; "
                    "its stack is outside any collective, where the others wait); stalled on node 3: ranks 13,12, "
                    "still progressing: 14,15; SIGABRT sent for the stalled ranks' stacks (PYTHONFAULTHANDLER); it "
                    "survived SIGABRT at 12:00:01; last lines of its stderr:");
  CK_CONTAINS(hang, "\n  stalled as well (they waited for it): node 0: ranks 0,1; node 5: ranks 40\n  class hang: ");

  Failure lost;
  lost.kind = FailureKind::NodeLost;
  lost.attempt = 1;
  lost.node = 2;
  lost.host = "n2";
  lost.addr = "10.0.0.2";
  lost.detail = "no heartbeat for 5 s (node down or network cut?)";
  lost.consequence = "spare node 3 (n3, 10.0.0.3) takes over group 2 (4 worker(s)) from node 2; 0 spare(s) left";
  RootCause loss{lost, 2, {}, worker_failure(), 1, {"1 (n1, 10.0.0.1)"}};
  loss.related->stderr_tail.clear();
  CK_STR_EQ(describe(loss),
            "node 2 (n2, 10.0.0.2) was lost: no heartbeat for 5 s (node down or network cut?) (attempt 1); spare "
            "node 3 (n3, 10.0.0.3) takes over group 2 (4 worker(s)) from node 2; 0 spare(s) left\n  (before the loss "
            "was noticed: worker rank 13 (local rank 1) on node 3 (gpu017) was killed by SIGKILL at 12:00:01 in "
            "attempt 2 of 2); no restart left to go on (--ddp-restarts=1); node 1 (n1, 10.0.0.1) had finished and "
            "left, so the run cannot restart\n  class node_lost: a lost node; --ddp-restarts applies; the node's "
            "fault");
  lost.at_rendezvous = true;
  lost.consequence.clear();
  CK_STR_EQ(first_line(lost, 1), "rendezvous failed: node 2 (n2, 10.0.0.2) was lost: no heartbeat for 5 s (node "
                                 "down or network cut?)");
  lost.at_rendezvous = false;
  lost.kind = FailureKind::NodeUnhealthy;
  lost.node = 0;
  lost.detail = "its HealthCheck /x failed: ECC";
  lost.consequence = "node 0 cannot be replaced (it hosts the rendezvous and MASTER_ADDR)";
  CK_STR_EQ(first_line(lost, 1), "node 0 (n2, 10.0.0.2) is unhealthy, taken out of the step: its HealthCheck /x "
                                 "failed: ECC; node 0 cannot be replaced (it hosts the rendezvous and MASTER_ADDR)");

  Failure setup;
  setup.kind = FailureKind::Setup;
  setup.detail = "rendezvous timed out after 60 s: 1 node(s) did not arrive: 3 (1 of 2 arrived)";
  RootCause setup_cause;
  setup_cause.failure = setup;
  CK_STR_EQ(describe(setup_cause), setup.detail);
  Failure start = worker_failure();
  start.kind = FailureKind::StartFailed;
  start.detail = "cannot start worker 0: fork(): Resource temporarily unavailable";
  CK_CONTAINS(first_line(start, 1), "on node 3 (gpu017) could not be started: cannot start worker 0: fork()");
  for (const auto kind : {FailureKind::WorkerExited, FailureKind::StartFailed, FailureKind::Hung,
                          FailureKind::HangUnreported, FailureKind::NodeLost, FailureKind::NodeUnhealthy,
                          FailureKind::AgentSignalled, FailureKind::Setup})
    ck_assert(kind_from_name(kind_name(kind)) == kind);
}
END_TEST

Suite* rdzv_messages_suite() {
  return make_suite("rdzv_messages", {every_message_survives_its_own_line, done_carries_the_whole_root_cause,
                                      messages_read_strictly, a_long_tail_is_shortened_to_fit_one_line,
                                      a_verdict_with_two_long_tails_fits_one_line,
                                      a_version_refusal_names_both_versions, the_handshake_reads_protocol_3_and_4_peers, each_kind_of_failure_is_worded_once});
}
