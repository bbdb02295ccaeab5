#include "slurm/job_report.hpp"

#include <spdlog/spdlog.h>

#include "ddp/base/parse.hpp"
#include "job/failure_text.hpp"
#include "job/job.hpp"

namespace ddp::agent {

namespace {

constexpr auto kReportRpcTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxComment = 400;

}  // namespace

std::string slurm_stop_text(const JobFields& job, int sig) {
  const std::string& state = job.state;
  const std::string& reason = job.reason;
  const std::string facts = " (" + signal_name(sig) + "; JobState=" + state + " Reason=" + reason + ")";
  if (reason == "TimeLimit" || state == "TIMEOUT")
    return "Slurm stopped the job: its time limit came" + facts +
           "; ask for more with --time, or resume from the "
           "newest checkpoint in a new job (--ddp-requeue does it before the limit)";
  // A preempted job is still RUNNING while its tasks have their GraceTime
  // (slurm.conf(5)): the sign is PreemptTime, set when Slurm chose to
  // preempt it ("None" before).
  if (state == "PREEMPTED" || reason.find("Preempt") != std::string::npos || job.preempt_chosen)
    return "Slurm stopped the job: it was preempted by a job of higher priority" + facts +
           "; resume from the newest checkpoint in a new job, or ask the site for a partition or QOS that is "
           "not preempted";
  if (state == "RUNNING" || state == "SUSPENDED")
    return "Slurm stopped this step while the job goes on" + facts +
           ": the step was cancelled (scancel JOB.STEP) or srun was interrupted";
  if (state == "COMPLETING" || state == "CANCELLED" || state == "COMPLETED" || state == "FAILED")
    return "Slurm stopped the job" + facts + ": it was cancelled (scancel) or its batch script ended";
  return "Slurm stopped the step" + facts;
}

std::string comment_with(const std::string& old_comment, const std::string& ours) {
  std::string mine = old_comment == "(null)" ? "" : old_comment;  // squeue's word for none
  if (const auto at = mine.find(" | ddp:"); at != std::string::npos) mine.resize(at);
  if (mine.rfind("ddp:", 0) == 0) mine.clear();
  std::string text = mine.empty() ? ours : mine + " | " + ours;
  if (text.size() > kMaxComment) text = text.substr(0, kMaxComment - 3) + "...";
  return text;
}

std::string verdict_comment(const RootCause& cause, const NodePlan& plan) {
  return "ddp: step " + std::to_string(plan.job_id) + "." + std::to_string(plan.step_id) + ": class " +
         class_name(class_of(cause.failure)) + ": " + printable(first_line(cause.failure, cause.attempts), 300);
}

JobReport::JobReport(const NodePlan& plan, bool standalone)
    : enabled_(!standalone && plan.job_id != 0 && plan.node_rank == 0),
      plan_(plan),
      job_(scontrol_job_name(plan)),
      writes_comment_(plan.job_comment) {}

void JobReport::on_signal(int sig) {
  if (!enabled_ || stop_signal_ || !comment_.empty()) return;
  stop_signal_ = sig;
  if (auto ok = show_job_.start(job_, kReportRpcTimeout); !ok)
    spdlog::warn("{} came; cannot ask slurmctld why: {}", signal_name(sig), ok.error());
}

void JobReport::on_verdict(const RootCause& cause) {
  if (!enabled_ || !writes_comment_ || !comment_.empty() || stop_signal_) return;
  comment_ = verdict_comment(cause, plan_);
  if (auto ok = comment_job_.start(job_, kReportRpcTimeout); !ok)
    spdlog::warn("cannot read job {}'s Comment: {}", job_, ok.error());
}

void JobReport::tick() {
  if (show_job_.running()) read_stop();
  if (comment_job_.running()) read_comment();
  if (comment_read_.running())  // squeue's answer, the Comment whole
    if (const auto answer = comment_read_.poll()) write_comment(answer->ok ? answer->said : "");
  if (comment_write_.running())
    if (const auto answer = comment_write_.poll(); answer && !answer->ok)
      spdlog::warn("cannot set job {}'s Comment: {}", job_, answer->said);
}

void JobReport::read_stop() {
  const auto answer = show_job_.poll();
  if (!answer) return;
  if (!*answer)
    return spdlog::warn("{} came; cannot ask slurmctld why: {}", signal_name(stop_signal_), answer->error());
  spdlog::error("root cause: {}\n  {}", slurm_stop_text(**answer, stop_signal_),
                class_line(FailureClass::SlurmStop));
}

// scontrol's JSON names the Comment; where the fields came from squeue
// (job_fields.hpp), squeue prints the Comment alone.
void JobReport::read_comment() {
  const auto answer = comment_job_.poll();
  if (!answer) return;
  if (*answer && (*answer)->comment) return write_comment(*(*answer)->comment);
  if (auto ok = comment_read_.start({"squeue", "-h", "-j", job_, "-o", "%k"}, kReportRpcTimeout, "", nullptr,
                                      Command::StopSignals::Ignore); !ok)
    spdlog::warn("cannot read job {}'s Comment: {}", job_, ok.error());
}

void JobReport::write_comment(const std::string& old) {
  const auto argv =
      std::vector<std::string>{"scontrol", "update", "JobId=" + job_, "Comment=" + comment_with(old, comment_)};
  if (auto ok = comment_write_.start(argv, kReportRpcTimeout, "", nullptr, Command::StopSignals::Ignore); !ok)
    spdlog::warn("cannot set job {}'s Comment: {}", job_, ok.error());
}

}  // namespace ddp::agent
