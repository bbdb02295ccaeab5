#include "slurm/requeue.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kRequeueRpcTimeout{30};
constexpr std::chrono::seconds kMargin{5};

// Slurm's KillWait as srun read it (SLURM_DDP_KILL_WAIT); Slurm's default, 30 s, when unknown.
std::chrono::seconds kill_wait_from_env() {
  if (const char* text = std::getenv("SLURM_DDP_KILL_WAIT"))
    if (const auto s = parse_uint(text, 0, 65535, "SLURM_DDP_KILL_WAIT")) return std::chrono::seconds(*s);
  return std::chrono::seconds(30);
}
}  // namespace

std::chrono::milliseconds requeue_wait_within(std::chrono::milliseconds wait, std::optional<std::chrono::seconds> left,
                                              std::chrono::seconds kill_wait) {
  if (!left) return wait;
  const auto usable = *left - kill_wait - kMargin;
  if (usable <= std::chrono::seconds(0)) return std::chrono::milliseconds(0);
  return std::min<std::chrono::milliseconds>(wait, usable);
}

Status Requeue::start(const std::string& job, const std::string& scontrol) {
  // Ignoring Slurm's SIGTERM, which the requeue brings at once: its answer
  // is still read if srun's SIGKILL does not follow (see requeue.hpp).
  job_ = job;
  return scontrol_.start({scontrol, "requeue", job}, kRequeueRpcTimeout, "(is slurm-client installed on node 0?)",
                         nullptr, Command::StopSignals::Ignore);
}

std::optional<Status> Requeue::poll() {
  auto outcome = scontrol_.poll();
  if (!outcome) return std::nullopt;
  if (outcome->timed_out)
    outcome->said = "no answer from slurmctld within " + std::to_string(kRequeueRpcTimeout.count()) + " s";
  if (!outcome->ok)
    return Status(fail("scontrol requeue " + job_ + ": " + (outcome->said.empty() ? "failed" : outcome->said)));
  return Status(Ok{});
}

Requeuer::Requeuer(const NodePlan& plan, bool standalone)
    : enabled_(plan.requeue && !standalone && plan.job_id != 0),
      job_(scontrol_job_name(plan)),
      wait_(plan.requeue_wait_ms),
      kill_wait_(kill_wait_from_env()),
      reports_bad_nodes_(!plan.bad_node_report.empty()) {}

void Requeuer::on_warning(int sig, bool over) {
  if (!enabled_ || armed_ || over) return;
  armed_ = true;
  warned_at_ = Clock::now();
  by_ = warned_at_ + wait_;
  spdlog::info("node 0: {} (Slurm's warning): job {} is requeued once every worker has ended, in {} s at most",
               signal_name(sig), job_, wait_.count() / 1000);
  // How long the job has left: the wait must end before Slurm ends the job.
  if (auto ok = show_job_.start(job_, std::chrono::seconds(10)); !ok)
    spdlog::warn("cannot ask slurmctld for job {}'s end time: {}; waiting up to {} s", job_, ok.error(),
                 wait_.count() / 1000);
}

// scontrol's answer: the wait cut to the time the job has left, said when cut.
void Requeuer::read_time_left() {
  const auto answer = show_job_.poll();
  if (!answer) return;
  if (!*answer) return spdlog::warn("cannot ask slurmctld for job {}'s end time: {}", job_, answer->error());
  const auto left = time_left_of(**answer, std::time(nullptr));
  const auto within = requeue_wait_within(wait_, left, kill_wait_);
  if (within >= wait_) return;
  by_ = warned_at_ + within;
  spdlog::info("node 0: job {} ends in {} s (KillWait {} s): requeued in {} s at most", job_, left->count(),
               kill_wait_.count(), within.count() / 1000);
}

void Requeuer::tick(bool workers_done, const std::vector<std::string>& keep_out) {
  if (!armed_ || done_) return;
  if (show_job_.running()) read_time_left();
  if (scontrol_.running()) return finish_scontrol();
  if (!workers_done && Clock::now() < by_) return;
  bad_nodes_ = keep_out;
  if (auto started = scontrol_.start(job_); !started) {
    done_ = true;
    spdlog::error("cannot requeue job {}: {}", job_, started.error());
  }
}

void Requeuer::finish_scontrol() {
  const auto result = scontrol_.poll();
  if (!result) return;
  done_ = true;
  if (!*result) return spdlog::error("cannot requeue job {}: {}", job_, result->error());
  std::string nodes;
  for (const auto& n : bad_nodes_) nodes += (nodes.empty() ? "" : ",") + n;
  if (nodes.empty())
    spdlog::info("job {} requeued: it goes back to the queue and resumes from its newest snapshot", job_);
  else if (reports_bad_nodes_)
    spdlog::info(
        "job {} requeued: it resumes from its newest snapshot, and not on {} (node 0's slurmstepd adds them "
        "to its ExcNodeList as this step ends, before it can start again)",
        job_, nodes);
  else
    spdlog::warn(
        "job {} requeued, but {} cannot be excluded from it: node 0's slurmstepd has no report of the bad nodes "
        "(slurmd's log says why); it may be given them again",
        job_, nodes);
  hold_until_ = Clock::now() + std::chrono::seconds(60);
}

bool Requeuer::holds() const {
  return armed_ && (!done_ || (hold_until_ && Clock::now() < *hold_until_));
}

}  // namespace ddp::agent
