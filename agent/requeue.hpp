// Node 0's requeue of the job (--ddp-requeue), without blocking the agent's
// event loop: `scontrol requeue JOBID`, whose answer is read when it comes.
// scontrol is Slurm's own client of the node's release and makes the
// slurm_requeue() call; the agent itself links no Slurm library, so one
// ddp-agent serves every Slurm release (and the GPU kit, which has no Slurm).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ddp/result.hpp"

namespace ddp::agent {

class Requeue {
 public:
  Requeue() = default;
  Requeue(const Requeue&) = delete;
  Requeue& operator=(const Requeue&) = delete;
  ~Requeue();  // a scontrol still running is killed

  // Starts `scontrol requeue job_id` (scontrol from PATH, or `scontrol` set).
  Status start(std::uint32_t job_id, const std::string& scontrol = "scontrol");
  bool running() const { return pid_ > 0; }
  // nullopt while scontrol runs; then Ok, or the failure with what scontrol
  // said. Kills a scontrol that takes longer than 30 s.
  std::optional<Status> poll();

 private:
  pid_t pid_ = -1;
  int out_ = -1;  // scontrol's stdout and stderr
  std::string said_;
  std::chrono::steady_clock::time_point deadline_;
  std::uint32_t job_id_ = 0;
};

}  // namespace ddp::agent
