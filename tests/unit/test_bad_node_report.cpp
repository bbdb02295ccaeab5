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
  ck_assert(report.refused.empty());
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

START_TEST(a_forged_report_names_only_the_steps_nodes_in_plain_text) {
  const std::string text = bad_node_line({"n2", "straggler"}) + "node=login1 reasons=x\n" +
                           "rm -rf /\n" + "node=n1 reasons=%0Afake%20line\n" + "node=n%ZZ reasons=x\n" +
                           bad_node_line({"n2", "again"}) + "node=n1 reasons=" + std::string(400, 'a') + "\n\n" +
                           "node=a%20b reasons=x\n";
  const auto report = read_bad_node_report(text, in_step);
  ck_assert_uint_eq(report.nodes.size(), 1);  // n2, once: its first line
  CK_STR_EQ(report.nodes[0].reasons, "straggler");
  ck_assert_uint_eq(report.refused.size(), 6);
  CK_STR_EQ(report.refused[0], "line 2: node login1 is not a node of this step");
  CK_STR_EQ(report.refused[1], "line 3: not node=NAME reasons=TEXT");
  CK_CONTAINS(report.refused[2], "line 4: the reason for n1 is not plain text");
  CK_STR_EQ(report.refused[3], "line 5: a value that is not percent-encoded");
  CK_CONTAINS(report.refused[4], "line 7: the reason for n1 is not plain text of 300 characters at most");
  CK_STR_EQ(report.refused[5], "line 9: not a node name");
}
END_TEST

START_TEST(a_report_past_its_bound_is_read_no_further) {
  std::string text;
  while (text.size() <= kMaxReportBytes) text += bad_node_line({"n1", std::string(200, 'r')});
  text += bad_node_line({"n2", "last"});
  const auto report = read_bad_node_report(text, in_step);
  ck_assert_uint_eq(report.nodes.size(), 1);  // n1 (n2 lies past the bound)
  CK_CONTAINS(report.refused.front(), "larger than 65536 bytes: read no further");
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
                     a_forged_report_names_only_the_steps_nodes_in_plain_text,
                     a_report_past_its_bound_is_read_no_further, the_requeued_jobs_exclusion_keeps_the_users_own});
}
