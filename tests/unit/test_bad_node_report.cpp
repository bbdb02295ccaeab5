// The bad-node report between node 0's agent and its slurmstepd: the agent's
// lines through a real FIFO (slurm/bad_node_reporter.hpp), what the plugin
// accepts of a report that the job's user can write anything into
// (ddp/wire/bad_node_report.hpp), and the requeued job's ExcNodeList made
// of it (spank/requeue_exclusion.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "ddp/wire/bad_node_report.hpp"
#include "slurm/bad_node_reporter.hpp"
#include "requeue_exclusion.hpp"
// Last: check.h defines a macro `fail`, which ddp/base/result.hpp declares as a function.
#include "suites.hpp"

using namespace ddp;

namespace {

bool in_step(const std::string& node) { return node == "n1" || node == "n2" || node == "gpu-007"; }

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  return text;
}

}  // namespace

START_TEST(lines_through_the_fifo_read_back_as_written) {
  char tmpl[] = "/tmp/ddp-badnode-XXXXXX";
  ck_assert_ptr_nonnull(::mkdtemp(tmpl));
  const std::string fifo = std::string(tmpl) + "/report";
  ck_assert_int_eq(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // the plugin's end
  ck_assert_int_ge(reader, 0);
  agent::BadNodeReporter reporter(fifo);
  std::vector<BadNode> out{{"n1", "blamed twice (cuda_nccl in attempt 0; straggler in attempt 1), taken out of the next attempts"}};
  reporter.tick(out);
  out.push_back({"gpu-007", "HealthCheck failed: ECC errors = 12"});
  reporter.tick(out);
  reporter.tick(out);  // nothing new: nothing written
  const auto report = read_bad_node_report(read_all(reader), in_step);
  ck_assert_uint_eq(report.nodes.size(), 2);
  ck_assert(report.nodes[0] == out[0]);
  ck_assert(report.nodes[1] == out[1]);
  ck_assert_uint_eq(report.refused, 0);
  ::close(reader);
  ::unlink(fifo.c_str());
  ::rmdir(tmpl);
}
END_TEST

START_TEST(no_reader_or_no_fifo_is_said_and_never_blocks) {
  agent::BadNodeReporter none;  // no FIFO in the plan: nothing to do
  none.tick({{"n1", "x"}});
  agent::BadNodeReporter gone("/tmp/ddp-badnode-no-such-fifo");
  gone.tick({{"n1", "x"}});  // a warning; returns at once
  gone.tick({{"n1", "x"}, {"n2", "y"}});
}
END_TEST

// The reason the agent writes (a HealthCheck's last line) is root's to read
// whatever its words: 400 characters with a degree sign reach root with the
// node named, cut to 300 and in printable ASCII.
START_TEST(a_long_reason_in_utf8_from_the_agent_names_its_node) {
  char tmpl[] = "/tmp/ddp-badnode-XXXXXX";
  ck_assert_ptr_nonnull(::mkdtemp(tmpl));
  const std::string fifo = std::string(tmpl) + "/report";
  ck_assert_int_eq(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(reader, 0);
  agent::BadNodeReporter reporter(fifo);
  const std::string said = "its HealthCheck /etc/slurm/hc failed: GPU at 95 \u00b0C\t" + std::string(400, 'x');
  reporter.tick({{"gpu-007", said}});
  const auto report = read_bad_node_report(read_all(reader), in_step);
  ::close(reader);
  ::unlink(fifo.c_str());
  ::rmdir(tmpl);
  ck_assert_uint_eq(report.refused, 0);
  ck_assert_uint_eq(report.nodes.size(), 1);
  CK_STR_EQ(report.nodes[0].node, "gpu-007");
  const std::string& reasons = report.nodes[0].reasons;
  ck_assert_uint_eq(reasons.size(), kMaxReasonChars);
  CK_CONTAINS(reasons, "its HealthCheck /etc/slurm/hc failed: GPU at 95 \\xc2\\xb0C\\x09xxx");
  ck_assert(reasons.ends_with("xxx [...]"));
}
END_TEST

// One encoding for both sides: escaped, cut between two characters of the
// result with a marker, and plain text unchanged (so applying it again
// changes nothing).
START_TEST(a_reason_is_made_plain_once_and_for_all) {
  CK_STR_EQ(plain_reason("ECC errors = 12"), "ECC errors = 12");
  CK_STR_EQ(plain_reason("two\nlines \x7f\\x41"), "two\\x0alines \\x7f\\x41");
  const std::string fits(kMaxReasonChars, 'a');
  CK_STR_EQ(plain_reason(fits), fits);
  const std::string cut = plain_reason(std::string(kMaxReasonChars - 7, 'a') + "\xff\xff");
  CK_STR_EQ(cut, std::string(kMaxReasonChars - 7, 'a') + " [...]");  // not half of a \xff
  for (const std::string& r : {cut, plain_reason(std::string(1000, '\x01')), plain_reason(fits + "b")}) {
    ck_assert_uint_le(r.size(), kMaxReasonChars);
    CK_STR_EQ(plain_reason(r), r);
  }
}
END_TEST

START_TEST(a_forged_report_names_only_the_steps_nodes) {
  const std::string text = bad_node_line({"n2", "straggler"}) + "node=login1 reasons=x\n" +
                           "rm -rf /\n" + "node=n1 reasons=%0Afake%20line\n" + "node=n%ZZ reasons=x\n" +
                           bad_node_line({"n2", "again"}) + "\n\n" + "node=a%20b reasons=x\n";
  const auto report = read_bad_node_report(text, in_step);
  ck_assert_uint_eq(report.nodes.size(), 2);  // n2, once: its first line
  CK_STR_EQ(report.nodes[0].reasons, "straggler");
  CK_STR_EQ(report.nodes[1].reasons, "\\x0afake line");  // a forged newline is only text
  ck_assert_uint_eq(report.refused, 4);
  CK_STR_EQ(report.first_refused, "line 2: node login1 is not a node of this step");
  CK_STR_EQ(refused_summary(report),
            "4 lines of node 0's report were refused (first: line 2: node login1 is not a node of this step)");
  CK_STR_EQ(read_bad_node_report("rm -rf /\n", in_step).first_refused, "line 1: not node=NAME reasons=TEXT");
  CK_STR_EQ(read_bad_node_report("node=n%ZZ reasons=x", in_step).first_refused,
            "line 1: a value that is not percent-encoded");
  CK_STR_EQ(refused_summary(read_bad_node_report("node=a%20b reasons=x\n", in_step)),
            "1 line of node 0's report was refused (first: line 1: not a node name)");
  CK_STR_EQ(refused_summary(read_bad_node_report(bad_node_line({"n1", "x"}), in_step)), "");
}
END_TEST

// The user can fill the pipe with junk: one line for slurmd's log per step.
START_TEST(a_report_of_junk_is_one_line_of_the_log) {
  std::string junk;
  while (junk.size() < kMaxReportBytes) junk += "x\n";
  const auto report = read_bad_node_report(junk, in_step);
  ck_assert_uint_eq(report.refused, kMaxReportBytes / 2);
  const auto summary = refused_summary(report);
  CK_STR_EQ(summary, "32768 lines of node 0's report were refused (first: line 1: not node=NAME reasons=TEXT)");
  ck_assert(summary.find('\n') == std::string::npos);
}
END_TEST

START_TEST(a_report_past_its_bound_is_read_no_further) {
  std::string text;
  while (text.size() <= kMaxReportBytes) text += bad_node_line({"n1", std::string(200, 'r')});
  text += bad_node_line({"n2", "last"});
  const auto report = read_bad_node_report(text, in_step);
  ck_assert_uint_eq(report.nodes.size(), 1);  // n1 (n2 lies past the bound)
  ck_assert(report.cut);
  CK_STR_EQ(refused_summary(report), "node 0's report is larger than 65536 bytes: read no further");
}
END_TEST

// The job's own ExcNodeList first, as Slurm's hostlist reads it (a range
// counts), then each node not in it; no update when nothing is new.
START_TEST(the_requeued_jobs_exclusion_keeps_the_users_own) {
  using spank::excluded_with;
  CK_STR_EQ(excluded_with("", {"ct-n1"}).value_or("none"), "ct-n1");
  CK_STR_EQ(excluded_with("ct-n[3-4]", {"ct-n1", "ct-n3", "ct-n1"}).value_or("none"), "ct-n[3-4],ct-n1");
  CK_STR_EQ(excluded_with("login1", {"gpu-007", "n2"}).value_or("none"), "login1,gpu-007,n2");
  ck_assert(!excluded_with("ct-n[1-4]", {"ct-n2"}).has_value());
  ck_assert(!excluded_with("ct-n1", {}).has_value());
}
END_TEST

Suite* bad_node_report_suite() {
  return make_suite("bad_node_report",
                    {lines_through_the_fifo_read_back_as_written, no_reader_or_no_fifo_is_said_and_never_blocks,
                     a_long_reason_in_utf8_from_the_agent_names_its_node, a_reason_is_made_plain_once_and_for_all,
                     a_forged_report_names_only_the_steps_nodes, a_report_of_junk_is_one_line_of_the_log,
                     a_report_past_its_bound_is_read_no_further, the_requeued_jobs_exclusion_keeps_the_users_own});
}
