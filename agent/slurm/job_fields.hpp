// A job's fields as node 0 reads them from slurmctld, through scontrol: the
// agent links no Slurm library, so one ddp-agent serves every release.
//
// Asked as `scontrol --json show job JOB` first: the fields by name, whatever
// text the job's user put in them (Slurm 23.02 on; seen on 24.11 and
// 26.05). A release whose scontrol gives no JSON (22.05's has no --json:
// "unrecognized option"; or text that is not JSON) is asked again as
// `scontrol show job -o JOB`, the one-line form, which
// show_job_line_fields() reads; after one such answer the agent asks that
// way only.
//
// The one-line form cannot delimit a field whose text holds " Key=": a word
// that begins with an upper-case name and "=" starts a field, other words
// continue the one before (Comment=a=b c is "a=b c"), and the first of two
// fields of a name is kept (a job name cannot forge the JobState that comes
// after it). So the Comment, free text, is only read from JSON (JobFields::
// comment); job_report.hpp reads it with squeue where there is none.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ddp/base/result.hpp"
#include "node/duties/command.hpp"

namespace ddp::agent {

struct JobFields {
  std::string state;                    // JobState as the text form prints it: RUNNING, COMPLETING, TIMEOUT
  std::string reason;                   // Reason: None, TimeLimit
  std::optional<std::time_t> end_time;  // EndTime; nullopt for none (no time limit, Unknown) or unreadable
  bool preempt_chosen = false;          // PreemptTime is set: Slurm chose to preempt the job
  std::optional<std::string> comment;   // from JSON only: "" for none
};

// scontrol --json's answer (its "jobs" list, the first job): numbers as
// {"set","infinite","number"} and job_state a list of flags (24.11, 26.05),
// or plain numbers and job_state a word (slurmrestd's v0.0.38 of 22.05). Text around the
// JSON (a warning on stderr) is skipped; nullopt when there is no job in it.
std::optional<JobFields> job_fields_from_json(std::string_view answer);

// `scontrol show job -o`'s line as (name, value) pairs, in order.
std::vector<std::pair<std::string, std::string>> show_job_line_fields(std::string_view line);

// The fields of that line ("(null)" read as none); the Comment is not read.
JobFields job_fields_from_line(std::string_view line);

// The seconds a job has left at `now`; nullopt for no end time. Never negative.
std::optional<std::chrono::seconds> time_left_of(const JobFields& job, std::time_t now);

// `scontrol show job`, --json then -o (see above), beside the event loop.
class ShowJob {
 public:
  // Ignores the terminating signals: the question is asked while Slurm stops the step.
  Status start(const std::string& job, std::chrono::seconds timeout);
  bool running() const { return command_.running(); }
  // nullopt while scontrol runs; then the fields, or what scontrol said.
  std::optional<Result<JobFields>> poll();

 private:
  Status ask(bool json);
  Command command_;
  std::string job_;
  std::chrono::seconds timeout_{10};
  bool json_ = false;       // this ask is --json
  bool json_failed_ = false;  // and an earlier one of this question gave no JSON
};

}  // namespace ddp::agent
