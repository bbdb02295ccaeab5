#include "duties/requeue.hpp"

#include <spdlog/spdlog.h>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kScontrolTimeout{30};
}

Status Requeue::start(const std::string& job, const std::string& scontrol) {
  job_ = job;
  return scontrol_.start({scontrol, "requeue", job}, kScontrolTimeout,
                         "(is slurm-client installed on node 0?)");
}

std::optional<Status> Requeue::poll() {
  auto outcome = scontrol_.poll();
  if (!outcome) return std::nullopt;
  if (outcome->ok) return Status(Ok{});
  if (outcome->timed_out)
    outcome->said = "no answer from slurmctld within " + std::to_string(kScontrolTimeout.count()) + " s";
  return Status(fail("scontrol requeue " + job_ + ": " +
                     (outcome->said.empty() ? "failed" : outcome->said)));
}

Requeuer::Requeuer(const NodePlan& plan, bool standalone)
    : enabled_(plan.requeue && !standalone && plan.job_id != 0),
      job_(scontrol_job_name(plan)),
      wait_(plan.requeue_wait_ms) {}

void Requeuer::on_warning(int sig, bool over) {
  if (!enabled_ || armed_ || over) return;
  armed_ = true;
  by_ = Clock::now() + wait_;
  spdlog::info("node 0: {} (Slurm's warning): job {} is requeued once every worker has ended, in {} s at most",
               signal_name(sig), job_, wait_.count() / 1000);
}

void Requeuer::tick(bool workers_done) {
  if (!armed_ || done_) return;
  if (scontrol_.running()) return finish_scontrol();
  if (!workers_done && Clock::now() < by_) return;
  if (auto started = scontrol_.start(job_); !started) {
    done_ = true;
    spdlog::error("cannot requeue job {}: {}", job_, started.error());
  }
}

void Requeuer::finish_scontrol() {
  const auto result = scontrol_.poll();
  if (!result) return;
  done_ = true;
  if (!*result) {
    spdlog::error("cannot requeue job {}: {}", job_, result->error());
    return;
  }
  spdlog::info("job {} requeued: it goes back to the queue and resumes from its newest snapshot", job_);
  hold_until_ = Clock::now() + std::chrono::seconds(60);
}

bool Requeuer::holds() const {
  return armed_ && (!done_ || (hold_until_ && Clock::now() < *hold_until_));
}

}  // namespace ddp::agent
