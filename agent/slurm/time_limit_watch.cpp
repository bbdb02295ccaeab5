#include "slurm/time_limit_watch.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {
constexpr auto kShowJobTimeout = std::chrono::seconds(10);
}  // namespace

std::optional<std::time_t> end_time_from_env(const char* text) {
  if (!text || !*text) return std::nullopt;
  const auto end = parse_uint(text, 1, 1ULL << 40, "SLURM_JOB_END_TIME");
  if (!end) return std::nullopt;
  return static_cast<std::time_t>(*end);
}

std::string time_limit_warning(const std::string& job, std::chrono::seconds left) {
  return "job " + job + " reaches its time limit in " + std::to_string(left.count()) +
         " s: Slurm then stops every worker, and what is not in a checkpoint is lost; ask for more "
         "time with --time, or add --ddp-requeue to have the job saved and requeued before its limit";
}

TimeLimitWatch::TimeLimitWatch(const NodePlan& plan, bool standalone) : job_(scontrol_job_name(plan)) {
  if (standalone || plan.job_id == 0 || plan.node_rank != 0 || plan.requeue) return;
  if (const auto end = end_time_from_env(std::getenv("SLURM_JOB_END_TIME"))) {
    end_ = *end;
  } else {  // "due" when the first ask is: kFirstAsk from now
    end_ = std::time(nullptr) + kFirstAsk.count() + kLead.count();
  }
  phase_ = Phase::Waiting;
}

void TimeLimitWatch::ask() {
  if (auto ok = show_job_.start(job_, kShowJobTimeout); !ok) {
    spdlog::debug("cannot ask slurmctld for job {}'s time limit: {}", job_, ok.error());
    phase_ = Phase::Off;
    return;
  }
  phase_ = Phase::Asking;
}

void TimeLimitWatch::tick(std::time_t now) {
  if (phase_ == Phase::Asking) return read_answer(now);
  if (phase_ == Phase::Waiting && now >= end_ - kLead.count()) ask();
}

void TimeLimitWatch::read_answer(std::time_t now) {
  const auto answer = show_job_.poll();
  if (!answer) return;
  const auto left = *answer ? time_left_of(**answer, now) : std::nullopt;
  if (!left) {  // no limit (EndTime=Unknown), or slurmctld did not answer: nothing to say
    phase_ = Phase::Off;
    return;
  }
  if (*left > kLead) {
    end_ = now + left->count();
    phase_ = Phase::Waiting;
    return;
  }
  spdlog::warn("{}", time_limit_warning(job_, *left));
  phase_ = Phase::Said;
}

}  // namespace ddp::agent
