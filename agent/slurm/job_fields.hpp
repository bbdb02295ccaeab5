// A job's fields as node 0 reads them from slurmctld, through scontrol and
// squeue: the agent links no Slurm library, so one ddp-agent serves every
// release.
//
// Asked as `scontrol --json show job JOB` first: the fields by name, whatever
// text the job's user put in them (Slurm 23.02 on; seen on 24.11 and 26.05).
// Where scontrol has no --json (22.05: "scontrol: unrecognized option
// '--json'") the agent asks squeue from then on; where its JSON cannot be
// read (a field of the user's with bytes that are not UTF-8), squeue answers
// that one question and the next asks for JSON again.
//
// squeue is asked for fields whose text Slurm alone writes, and nothing else:
// `squeue --noheader --states=all --jobs=JOB
// --Format=State:0|,EndTime:0|,PreemptTime:0|,Reason:0`, times as seconds
// since the epoch (SLURM_TIME_FORMAT=%s). A line of
// STATE|END|PREEMPT|REASON: no text of the user's (the job's name, its
// Comment) is in it, so none can forge a field; the Reason, last, may hold
// any text without moving the others. The Comment is not in that line
// (JobFields::comment is nullopt): job_report.hpp reads it alone with
// squeue's %k.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

// squeue's answer (see above): the first line of that shape, so that a
// warning before it is skipped; "(null)" read as none. nullopt when there is
// no such line (the job is gone: squeue printed nothing, or an error).
std::optional<JobFields> job_fields_from_squeue(std::string_view answer);

// Whether scontrol's answer to --json is that of a release without it, which
// the agent then never asks for JSON again; not an answer it could not read.
bool scontrol_has_no_json(bool exited_ok, std::string_view answer);

// The seconds a job has left at `now`; nullopt for no end time. Never negative.
std::optional<std::chrono::seconds> time_left_of(const JobFields& job, std::time_t now);

// The job's fields, from scontrol's JSON or squeue (see above), beside the
// event loop.
class ShowJob {
 public:
  // The commands it runs, and where it keeps that this node's scontrol has
  // no --json; by default scontrol and squeue from PATH and the process's
  // own flag (tests name stand-ins).
  struct Tools {
    std::string scontrol = "scontrol";
    std::string squeue = "squeue";
    bool* no_json = nullptr;
  };
  ShowJob() = default;
  explicit ShowJob(Tools tools) : tools_(std::move(tools)) {}

  // Ignores the terminating signals: the question is asked while Slurm stops the step.
  Status start(const std::string& job, std::chrono::seconds timeout);
  bool running() const { return command_.running(); }
  // nullopt while a command runs; then the fields, or why there are none.
  std::optional<Result<JobFields>> poll();

 private:
  Status ask(bool json);
  std::optional<Result<JobFields>> read_json(const Command::Outcome& answer);
  bool& no_json();
  Tools tools_;
  Command command_;
  std::string job_;
  std::chrono::seconds timeout_{10};
  bool json_ = false;  // this ask is scontrol's --json
};

}  // namespace ddp::agent
