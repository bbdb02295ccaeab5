// Node 0's requeue of the job (--ddp-requeue), without blocking the agent's
// event loop: `scontrol requeue JOBID`, whose answer is read when it comes.
// scontrol is Slurm's own client of the node's release and makes the
// slurm_requeue() call; the agent itself links no Slurm library, so one
// ddp-agent serves every Slurm release (and the GPU kit, which has no Slurm).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "command.hpp"
#include "ddp/base/result.hpp"

namespace ddp::agent {

class Requeue {
 public:
  // Starts `scontrol requeue job_id` (scontrol from PATH, or `scontrol` set).
  Status start(std::uint32_t job_id, const std::string& scontrol = "scontrol");
  bool running() const { return scontrol_.running(); }
  // nullopt while scontrol runs; then Ok, or the failure with what scontrol
  // said. Kills a scontrol that takes longer than 30 s (and one still
  // running when the Requeue goes).
  std::optional<Status> poll();

 private:
  Command scontrol_;
  std::uint32_t job_id_ = 0;
};

}  // namespace ddp::agent
