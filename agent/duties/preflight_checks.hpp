// A node's side of the pre-flight (--ddp-preflight, rendezvous/preflight.hpp):
// node 0's CHECKCPU or CHECKNET, run beside the event loop by this agent's
// own binary in a helper mode (checks/checks.hpp), so the loop never blocks
// and heartbeats go on; its answer goes back as CHECKED.
//
// How a GEMM reaches the agent, a CPU program: the helper process links
// OpenBLAS and runs in the step's cgroup and cpuset, as the workers will.
// On GPU nodes it times the CPUs too: a cuBLAS GEMM on each GPU is not built
// yet (it would be ddp-train's own kernels, run the same way).
#pragma once

#include <optional>
#include <string>

#include "ddp/wire/rdzv_messages.hpp"
#include "duties/command.hpp"

namespace ddp::agent {

class PreflightChecks {
 public:
  // `self`: this agent's binary (/proc/self/exe, read at start).
  explicit PreflightChecks(std::string self) : self_(std::move(self)) {}

  // Starts the check an order asks for; CHECKED with `failed` when it cannot.
  std::optional<rdzv::Checked> start(const rdzv::Order& order);
  // Its CHECKED once it ended; nullopt while it runs or when none runs.
  std::optional<rdzv::Checked> poll();

 private:
  std::string self_;
  std::string what_;  // the running check's
  Command command_;
};

// The helper's answer ("mflops=41234"), as a CHECKED for `what`.
rdzv::Checked checked_from(const std::string& what, const Command::Outcome& outcome);

}  // namespace ddp::agent
