#include "requeue.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kScontrolTimeout{30};
}

Status Requeue::start(std::uint32_t job_id, const std::string& scontrol) {
  job_id_ = job_id;
  return scontrol_.start({scontrol, "requeue", std::to_string(job_id)}, kScontrolTimeout,
                         "(is slurm-client installed on node 0?)");
}

std::optional<Status> Requeue::poll() {
  auto outcome = scontrol_.poll();
  if (!outcome) return std::nullopt;
  if (outcome->ok) return Status(Ok{});
  if (outcome->timed_out)
    outcome->said = "no answer from slurmctld within " + std::to_string(kScontrolTimeout.count()) + " s";
  return Status(fail("scontrol requeue " + std::to_string(job_id_) + ": " +
                     (outcome->said.empty() ? "failed" : outcome->said)));
}

}  // namespace ddp::agent
