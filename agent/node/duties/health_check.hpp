// The site's HealthCheck= (ddp.conf): after this node's first worker failure
// in an attempt, is the node itself at fault (a GPU with ECC errors, a full
// disk)? The command runs while the workers stop, as the job's user, with the
// failure in DDP_HEALTH_FAILED_RANK and DDP_HEALTH_FAILURE; exit 0 means
// healthy. Its verdict goes with this node's STOPPED, and an unhealthy node
// is taken out of the step (agent/job/job.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "node/duties/command.hpp"

namespace ddp::agent {

class HealthCheck {
 public:
  // `command` "" (no check): start() does nothing and every verdict is healthy.
  HealthCheck(std::string command, std::chrono::milliseconds timeout, std::uint32_t node, std::string host);

  // After a worker failure (`failure`: its first line); not while one runs.
  void start(std::uint32_t rank, const std::string& failure);
  bool running() const { return command_.running(); }
  // From the loop: true once, when a started check has ended (its verdict
  // is then ready; an unhealthy one is logged).
  bool poll();
  // For STOPPED: "" when healthy or unknown, else what is wrong with the
  // node; forgotten once taken.
  std::string take_verdict();

 private:
  std::string describe_failure(const Command::Outcome& outcome) const;

  std::string path_;
  std::chrono::milliseconds timeout_;
  std::uint32_t node_;
  std::string host_;
  Command command_;
  std::optional<std::string> verdict_;
};

}  // namespace ddp::agent
