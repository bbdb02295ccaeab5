// Node 0's reading of a job's fields (agent/slurm/job_fields.hpp): the JSON
// of each release's scontrol --json, and squeue's line of fields Slurm alone
// writes where there is none; a job's name or Comment forges neither.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "slurm/job_fields.hpp"
#include "slurm/job_report.hpp"
#include "suites.hpp"

using ddp::agent::job_fields_from_json;
using ddp::agent::job_fields_from_squeue;
using ddp::agent::JobFields;
using ddp::agent::ShowJob;

namespace {

namespace jf_fs = std::filesystem;

std::string jf_scratch() {
  char dir[] = "/tmp/ddp-job-fields-XXXXXX";
  ck_assert(::mkdtemp(dir) != nullptr);
  return dir;
}

// A stand-in for a Slurm command: a shell script in `dir`.
std::string jf_script(const std::string& dir, const std::string& name, const std::string& body) {
  const auto path = dir + "/" + name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  jf_fs::permissions(path, jf_fs::perms::owner_all);
  return path;
}

std::string jf_slurp(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// The answer to one question, polled as the agent's loop does.
ddp::Result<JobFields> jf_ask(ShowJob& show, const std::string& job) {
  ck_assert(show.start(job, std::chrono::seconds(10)).ok());
  for (int i = 0; i < 1000; ++i) {
    if (auto answer = show.poll()) return std::move(*answer);
    ::usleep(10000);
  }
  ck_abort_msg("no answer within 10 s");
  return ddp::Result<JobFields>(ddp::fail("none"));
}

// As 22.05's scontrol and squeue answer for job 7, running, named and
// commented with the text of other fields: scontrol has no --json, and its
// one-line form carries the name before the real JobState and the rest.
constexpr const char* kForged =
    "x JobState=COMPLETED Reason=TimeLimit EndTime=2030-01-01T00:00:00 "
    "PreemptTime=2026-01-01T00:00:00 UserId=root(0)";
constexpr const char* kSqueueFields = "--Format=State:0|,EndTime:0|,PreemptTime:0|,Reason:0";

std::string jf_fake_22_05(const std::string& dir) {
  const std::string forged = kForged;
  jf_script(dir, "scontrol",
            "case \"$1\" in --json) echo \"scontrol: unrecognized option '--json'\" >&2;"
            " echo 'Try \"scontrol --help\" for more information' >&2; exit 1;; esac\n"
            "echo 'JobId=7 JobName=" +
                forged +
                " UserId=alice(1001) GroupId=alice(1001) JobState=RUNNING Reason=None "
                "Dependency=(null) EndTime=2026-12-02T10:02:01 PreemptTime=None Comment=" +
                forged + "'");
  // squeue prints what --Format asks for; any other question is refused.
  jf_script(dir, "squeue",
            "for a; do case \"$a\" in '" + std::string(kSqueueFields) +
                "') echo 'RUNNING|1795000000|N/A|None'; exit 0;;"
                " %k) echo '" +
                forged + "'; exit 0;; esac; done\necho \"squeue: unexpected: $*\" >&2; exit 1");
  return dir;
}

}  // namespace

START_TEST(squeues_line_gives_the_job_fields) {
  const auto f = job_fields_from_squeue("COMPLETING|1795000000|N/A|TimeLimit\n");
  ck_assert(f.has_value());
  CK_STR_EQ(f->state, "COMPLETING");
  CK_STR_EQ(f->reason, "TimeLimit");
  ck_assert(f->end_time == std::time_t(1795000000));
  ck_assert(!f->preempt_chosen);
  ck_assert(!f->comment);  // read alone, with squeue's %k
  ck_assert(job_fields_from_squeue("RUNNING|1795000000|1794999000|None")->preempt_chosen);
  // No time limit, no preemption, in each word squeue has for them.
  for (const char* none : {"NONE", "Unknown", "N/A", "NOT_SET", "UNLIMITED", "0", ""}) {
    const auto bare = job_fields_from_squeue(std::string("RUNNING|") + none + "|" + none + "|(null)");
    ck_assert(bare && !bare->end_time && !bare->preempt_chosen && bare->reason.empty());
  }
  // A warning before the line is skipped; no line of that shape is no job.
  const auto warned = job_fields_from_squeue("squeue: error: a|b|c|d\nTIMEOUT|1795000000|N/A|TimeLimit");
  ck_assert(warned && warned->state == "TIMEOUT");
  ck_assert(!job_fields_from_squeue(""));
  ck_assert(!job_fields_from_squeue("slurm_load_jobs error: Invalid job id specified"));
  ck_assert(!job_fields_from_squeue("RUNNING|1795000000"));
  // The Reason, last, is read whole: no text in it moves the fields before it.
  const auto odd = job_fields_from_squeue("RUNNING|1795000000|N/A|launch failed|COMPLETED|1|2|TimeLimit ");
  ck_assert(odd && odd->state == "RUNNING" && !odd->preempt_chosen && odd->end_time == std::time_t(1795000000));
  CK_STR_EQ(odd->reason, "launch failed|COMPLETED|1|2|TimeLimit");
}
END_TEST

// On 22.05, a job whose name and Comment carry the text of its JobState,
// Reason, EndTime and PreemptTime: node 0 reads the job's own, as squeue
// prints them, and never the one-line form the name could forge.
START_TEST(a_forged_job_name_or_comment_is_not_believed) {
  const auto dir = jf_fake_22_05(jf_scratch());
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", (dir + ":" + path).c_str(), 1);
  ShowJob show;
  const auto f = jf_ask(show, "7");
  ::setenv("PATH", path.c_str(), 1);
  jf_fs::remove_all(dir);
  ck_assert_msg(f.ok(), "%s", f.ok() ? "" : f.error().c_str());
  CK_STR_EQ(f->state, "RUNNING");
  CK_STR_EQ(f->reason, "None");
  ck_assert(f->end_time == std::time_t(1795000000));
  ck_assert(!f->preempt_chosen);
  CK_CONTAINS(ddp::agent::slurm_stop_text(*f, SIGTERM), "while the job goes on");
}
END_TEST

// Only scontrol's own word that it has no --json sends every question to
// squeue; JSON it could not read (a name that is not UTF-8) sends that one.
START_TEST(only_a_scontrol_without_json_is_never_asked_for_json_again) {
  using ddp::agent::scontrol_has_no_json;
  ck_assert(scontrol_has_no_json(false,
                                 "scontrol: unrecognized option '--json'\n"
                                 "Try \"scontrol --help\" for more information"));
  ck_assert(!scontrol_has_no_json(true, "scontrol: unrecognized option '--json'"));
  ck_assert(!scontrol_has_no_json(false, "slurm_load_jobs error: Invalid job id specified"));
  ck_assert(!scontrol_has_no_json(false, R"({"jobs":[{"comment":"unrecognized option '--json'"}]})"));
  const auto dir = jf_scratch();
  const auto log = dir + "/asked";
  const auto squeue = jf_script(dir, "squeue",
                                "echo \"squeue $* $SLURM_TIME_FORMAT $(env | grep -c ^SQUEUE_)\" >> " + log +
                                    "; echo 'RUNNING|1795000000|N/A|None'");
  const auto unreadable = jf_script(dir, "scontrol-unreadable",
                                    "echo \"scontrol $*\" >> " + log + "; printf '{\"jobs\":[{\"name\":\"\\377\"}]}'");
  const auto without_json =
      jf_script(dir, "scontrol-22.05",
                "echo \"scontrol $*\" >> " + log + "; echo \"scontrol: unrecognized option '--json'\" >&2; exit 1");
  ::setenv("SQUEUE_STATES", "RUNNING", 1);  // the user's own defaults do not reach squeue
  bool no_json = false;
  ShowJob unreadable_json({unreadable, squeue, &no_json});
  for (int i = 0; i < 2; ++i) ck_assert(jf_ask(unreadable_json, "7")->state == "RUNNING");
  ck_assert(!no_json);
  ShowJob old({without_json, squeue, &no_json});
  for (int i = 0; i < 2; ++i) ck_assert(jf_ask(old, "8")->state == "RUNNING");
  ck_assert(no_json);
  ::unsetenv("SQUEUE_STATES");
  const auto squeue_of = [&](const std::string& job) {
    return "squeue --noheader --states=all --jobs=" + job + " " + kSqueueFields + " %s 0\n";
  };
  CK_STR_EQ(jf_slurp(log), "scontrol --json show job 7\n" + squeue_of("7") + "scontrol --json show job 7\n" +
                               squeue_of("7") + "scontrol --json show job 8\n" + squeue_of("8") + squeue_of("8"));
  jf_fs::remove_all(dir);
}
END_TEST

// Plain numbers and job_state a word, as slurmrestd's v0.0.38 (22.05) wrote
// them; 22.05's scontrol itself has no --json (squeue answers there).
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
  const auto failed = job_fields_from_json(R"({"jobs":[{"job_state":["FAILED"],"state_reason":"NonZeroExitCode",)"
                                           R"("end_time":{"set":true,"infinite":false,"number":1796208935},)"
                                           R"("preempt_time":{"set":true,"infinite":false,"number":0},)"
                                           R"("time_limit":{"set":true,"infinite":false,"number":525600}}]})");
  ck_assert(failed && failed->state == "FAILED" && !failed->preempt_chosen);
  ck_assert(failed->end_time == std::time_t(1796208935));
  // A name and Comment that carry other fields' text, JSON's included, are
  // the name and Comment.
  const auto named = job_fields_from_json(
      R"({"jobs":[{"name":"x JobState=COMPLETED Reason=TimeLimit \",\"job_state\":[\"COMPLETED\"]",)"
      R"("comment":"y\"}],\"jobs\":[{\"job_state\":\"FAILED\"}]}","job_state":["RUNNING"],"state_reason":"None",)"
      R"("end_time":{"set":true,"infinite":false,"number":1795000000},"preempt_time":{"set":false,"number":0}}]})");
  ck_assert(named && named->state == "RUNNING" && named->reason == "None" && !named->preempt_chosen);
  CK_STR_EQ(*named->comment, "y\"}],\"jobs\":[{\"job_state\":\"FAILED\"}]}");
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
  return make_suite("job_fields",
                    {squeues_line_gives_the_job_fields, a_forged_job_name_or_comment_is_not_believed,
                     only_a_scontrol_without_json_is_never_asked_for_json_again, plain_number_json_is_read,
                     newer_json_is_read, what_is_not_scontrols_json_is_refused});
}
