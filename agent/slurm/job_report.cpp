#include "slurm/job_report.hpp"

#include <spdlog/spdlog.h>

#include <sstream>

#include "ddp/base/parse.hpp"
#include "job/failure_text.hpp"
#include "job/job.hpp"

namespace ddp::agent {

namespace {

constexpr auto kReportRpcTimeout = std::chrono::seconds(10);
constexpr std::size_t kMaxComment = 400;

// A field of `scontrol show job -o`'s one line ("Reason=TimeLimit").
std::string field(const std::string& show_job, const std::string& name) {
  std::istringstream words(show_job);
  for (std::string word; words >> word;)
    if (word.rfind(name + "=", 0) == 0) return word.substr(name.size() + 1);
  return "";
}

}  // namespace

std::string slurm_stop_text(const std::string& show_job, int sig) {
  const std::string state = field(show_job, "JobState"), reason = field(show_job, "Reason");
  const std::string facts = " (" + signal_name(sig) + "; JobState=" + state + " Reason=" + reason + ")";
  if (reason == "TimeLimit" || state == "TIMEOUT")
    return "Slurm stopped the job: its time limit came" + facts +
           "; ask for more with --time, or resume from the "
           "newest checkpoint in a new job (--ddp-requeue does it before the limit)";
  // A preempted job is still RUNNING while its tasks have their GraceTime
  // (slurm.conf(5)): the sign is PreemptTime, set when Slurm chose to
  // preempt it ("None" before).
  const std::string preempted_at = field(show_job, "PreemptTime");
  if (state == "PREEMPTED" || reason.find("Preempt") != std::string::npos ||
      (!preempted_at.empty() && preempted_at != "None"))
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
    : enabled_(!standalone && plan.job_id != 0 && plan.node_rank == 0), plan_(plan), job_(scontrol_job_name(plan)) {}

void JobReport::on_signal(int sig) {
  if (!enabled_ || stop_signal_ || !comment_.empty()) return;
  stop_signal_ = sig;
  if (auto ok = show_job_.start({"scontrol", "show", "job", "-o", job_}, kReportRpcTimeout, "", nullptr,
                                   Command::StopSignals::Ignore); !ok)
    spdlog::warn("{} came; cannot ask slurmctld why: {}", signal_name(sig), ok.error());
}

void JobReport::on_verdict(const RootCause& cause) {
  if (!enabled_ || !comment_.empty() || stop_signal_) return;
  comment_ = verdict_comment(cause, plan_);
  if (auto ok = comment_read_.start({"squeue", "-h", "-j", job_, "-o", "%k"}, kReportRpcTimeout, "", nullptr,
                                      Command::StopSignals::Ignore); !ok)
    spdlog::warn("cannot read job {}'s Comment: {}", job_, ok.error());
}

void JobReport::tick() {
  if (show_job_.running()) read_stop();
  if (comment_read_.running()) write_comment();
  if (comment_write_.running())
    if (const auto answer = comment_write_.poll(); answer && !answer->ok)
      spdlog::warn("cannot set job {}'s Comment: {}", job_, answer->said);
}

void JobReport::read_stop() {
  const auto answer = show_job_.poll();
  if (!answer) return;
  if (!answer->ok)
    return spdlog::warn("{} came; cannot ask slurmctld why: {}", signal_name(stop_signal_), answer->said);
  spdlog::error("root cause: {}\n  {}", slurm_stop_text(answer->said, stop_signal_),
                class_line(FailureClass::SlurmStop));
}

void JobReport::write_comment() {
  const auto answer = comment_read_.poll();
  if (!answer) return;
  const std::string old = answer->ok ? answer->said : "";
  const auto argv =
      std::vector<std::string>{"scontrol", "update", "JobId=" + job_, "Comment=" + comment_with(old, comment_)};
  if (auto ok = comment_write_.start(argv, kReportRpcTimeout, "", nullptr, Command::StopSignals::Ignore); !ok)
    spdlog::warn("cannot set job {}'s Comment: {}", job_, ok.error());
}

}  // namespace ddp::agent
