// Node 0's reading of `scontrol show job` (agent/slurm/job_fields.hpp): the
// JSON of each release's scontrol --json, and the one-line form where there
// is none, field by field, never by searching the text.
#include <csignal>
#include <ctime>
#include <string>

#include "slurm/job_fields.hpp"
#include "slurm/job_report.hpp"
#include "suites.hpp"

using ddp::agent::job_fields_from_json;
using ddp::agent::job_fields_from_line;
using ddp::agent::show_job_line_fields;

namespace {

std::time_t jf_local(int hour, int min, int sec) {
  std::tm t{};
  t.tm_year = 126, t.tm_mon = 11, t.tm_mday = 2, t.tm_hour = hour, t.tm_min = min, t.tm_sec = sec, t.tm_isdst = -1;
  return std::mktime(&t);
}

}  // namespace

START_TEST(the_one_line_form_is_read_field_by_field) {
  const auto fields = show_job_line_fields(
      "JobId=42 JobName=my job JobState=RUNNING Reason=None Dependency=(null) ReqB:S:C:T=0:0:*:* "
      "CPUs/Task=1 Comment=a=b c x=y StdErr=/tmp/o");
  ck_assert_uint_eq(fields.size(), 9);
  CK_STR_EQ(fields[1].first, "JobName");
  CK_STR_EQ(fields[1].second, "my job");  // a value with spaces
  CK_STR_EQ(fields[5].first, "ReqB:S:C:T");
  CK_STR_EQ(fields[6].first, "CPUs/Task");
  CK_STR_EQ(fields[7].second, "a=b c x=y");  // '=' in a value, lower-case words with '='
  CK_STR_EQ(fields[8].second, "/tmp/o");
  // Only the first line; no field before the first name.
  ck_assert_uint_eq(show_job_line_fields("junk JobId=1\nJobId=2").size(), 1);
  ck_assert(show_job_line_fields("slurm_load_jobs error: Invalid job id specified").empty());
}
END_TEST

START_TEST(the_one_line_form_gives_the_job_fields) {
  const auto f = job_fields_from_line(
      "JobId=7 JobName=x JobState=COMPLETING Reason=TimeLimit EndTime=2026-12-02T10:02:01 "
      "PreemptTime=None Comment=(null)");
  CK_STR_EQ(f.state, "COMPLETING");
  CK_STR_EQ(f.reason, "TimeLimit");
  ck_assert(f.end_time == jf_local(10, 2, 1));
  ck_assert(!f.preempt_chosen);
  ck_assert(!f.comment);  // the one-line form cannot delimit it
  // Absent fields, (null), Unknown: none.
  const auto bare = job_fields_from_line("JobId=7 Reason=(null) EndTime=Unknown");
  ck_assert(bare.state.empty() && bare.reason.empty() && !bare.end_time);
  // A job name cannot forge the fields after it: the first of a name is kept.
  const auto forged = job_fields_from_line("JobId=7 JobName=a JobState=RUNNING Reason=None Comment=x Reason=TimeLimit");
  CK_STR_EQ(forged.reason, "None");
  ck_assert(job_fields_from_line("JobId=3 JobState=RUNNING PreemptTime=2026-11-27T19:38:38").preempt_chosen);
}
END_TEST

// Plain numbers and job_state a word, as slurmrestd's v0.0.38 (22.05) wrote
// them; 22.05's scontrol itself has no --json (it answers in the -o form).
START_TEST(plain_number_json_is_read) {
  const auto f = job_fields_from_json(
      R"({"meta":{"plugin":{"type":"openapi\/v0.0.38"}},"errors":[],"jobs":[{"job_id":7,"comment":"a=b c",)"
      R"("job_state":"COMPLETING","state_reason":"TimeLimit","end_time":1795000000,"preempt_time":0,)"
      R"("time_limit":2}]})");
  ck_assert(f.has_value());
  CK_STR_EQ(f->state, "COMPLETING");
  CK_STR_EQ(f->reason, "TimeLimit");
  ck_assert(f->end_time == std::time_t(1795000000));
  ck_assert(!f->preempt_chosen);
  ck_assert(f->comment && *f->comment == "a=b c");
  const auto unlimited = job_fields_from_json(R"({"jobs":[{"end_time":1795000000,"time_limit":4294967294}]})");
  ck_assert(unlimited && !unlimited->end_time && unlimited->comment && unlimited->comment->empty());
}
END_TEST

// 24.11 and 26.05 (seen in integration.job_comment): numbers as
// {"set","infinite","number"}, job_state a list of flags.
START_TEST(newer_json_is_read) {
  const auto f = job_fields_from_json(
      "scontrol: warning: something on stderr first\n"
      R"({"jobs":[{"job_state":["CANCELLED","COMPLETING"],"state_reason":"None","comment":"acct-123",)"
      R"("end_time":{"set":true,"infinite":false,"number":1795000000},)"
      R"("preempt_time":{"set":true,"infinite":false,"number":1794999000},)"
      R"("time_limit":{"set":true,"infinite":false,"number":2}}],"warnings":[]})");
  ck_assert(f.has_value());
  CK_STR_EQ(f->state, "COMPLETING");  // as the text form says it
  ck_assert(f->end_time == std::time_t(1795000000));
  ck_assert(f->preempt_chosen);
  CK_STR_EQ(*f->comment, "acct-123");
  const auto running = job_fields_from_json(
      R"({"jobs":[{"job_state":["RUNNING"],"end_time":{"set":true,"infinite":false,"number":1},)"
      R"("time_limit":{"set":false,"infinite":true,"number":0},"preempt_time":{"set":false,"number":0}}]})");
  ck_assert(running && running->state == "RUNNING" && !running->end_time && !running->preempt_chosen);
  // As 26.05 answered for a failed job: PreemptTime set to 0 is none.
  const auto failed = job_fields_from_json(
      R"({"jobs":[{"job_state":["FAILED"],"state_reason":"NonZeroExitCode",)"
      R"("end_time":{"set":true,"infinite":false,"number":1796208935},)"
      R"("preempt_time":{"set":true,"infinite":false,"number":0},)"
      R"("time_limit":{"set":true,"infinite":false,"number":525600}}]})");
  ck_assert(failed && failed->state == "FAILED" && !failed->preempt_chosen);
  ck_assert(failed->end_time == std::time_t(1796208935));
  // The same question through slurm_stop_text, whichever form answered.
  CK_CONTAINS(ddp::agent::slurm_stop_text(*f, SIGTERM), "it was preempted");
}
END_TEST

START_TEST(what_is_not_scontrols_json_is_refused) {
  ck_assert(!job_fields_from_json(""));
  ck_assert(!job_fields_from_json("scontrol: unrecognized option '--json'"));
  ck_assert(!job_fields_from_json("JobId=7 JobState=RUNNING Comment={x}"));
  ck_assert(!job_fields_from_json(R"({"jobs":[]})"));
  ck_assert(!job_fields_from_json(R"({"jobs":[1]})"));
  ck_assert(!job_fields_from_json(R"({"errors":[{"error":"Invalid job id specified"}]})"));
  ck_assert(!job_fields_from_json(R"({"jobs":[{"job_state":"RUNNING")"));  // cut short
  // A field of another type than any release's: refused, never thrown.
  ck_assert(!job_fields_from_json(R"({"jobs":[{"end_time":{"infinite":"no"}}]})"));
  const auto odd = job_fields_from_json(R"({"jobs":[{"job_state":7,"comment":["x"],"end_time":"soon"}]})");
  ck_assert(odd && odd->state.empty() && odd->comment->empty() && !odd->end_time);
}
END_TEST

Suite* job_fields_suite() {
  return make_suite("job_fields", {the_one_line_form_is_read_field_by_field, the_one_line_form_gives_the_job_fields,
                                   plain_number_json_is_read, newer_json_is_read, what_is_not_scontrols_json_is_refused});
}
