// A node's side of the pre-flight (--ddp-preflight, job/preflight.hpp):
// node 0's CHECKCPU or CHECKNET, run beside the event loop by this agent's
// own binary in a helper mode (checks/checks.hpp), so the loop never blocks
// and heartbeats go on; and the receiving end of other nodes' transfers (a
// check sink, node/duties/check_sink.hpp, in this loop), open from before
// JOIN, which carries its port, until the first START. Every outcome goes
// back as CHECKED.
//
// How a GEMM reaches the agent, a CPU program: the helper process links
// OpenBLAS and runs in the step's cgroup and cpuset, as the workers will.
// On GPU nodes it times the CPUs too: a cuBLAS GEMM on each GPU is not built
// yet (it would be ddp-train's own kernels, run the same way).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_messages.hpp"
#include "node/duties/command.hpp"
#include "event_loop.hpp"
#include "node/duties/check_sink.hpp"

namespace ddp::agent {

class PreflightChecks {
 public:
  // `self`: this agent's binary (/proc/self/exe, read at start).
  // `secret` and `run`: the step's (the transfers prove the one, for the other).
  PreflightChecks(EventLoop& loop, std::string self, std::string secret, std::string run)
      : self_(std::move(self)), secret_(secret), run_(run), sink_(loop, std::move(secret), std::move(run)) {}

  // The receiving end, on a port of the kernel's choosing: that port, or 0
  // (said as a warning) when it cannot listen: node 0 then counts the
  // transfers to this node as failed, naming why.
  std::uint16_t open_sink();
  void close_sink() { sink_.close(); }
  // Starts the check an order asks for; CHECKED with `failed` when it cannot.
  // One runs at a time: an order that comes while one runs waits for it
  // (node 0 sends a node's next transfer once its last one's receiver
  // answered, which can be before this node's sender has exited); a third
  // is refused.
  std::optional<rdzv::Checked> start(const rdzv::Order& order);
  // The running check's CHECKED once it ended, and one for every transfer
  // this node received since the last call.
  std::vector<rdzv::Checked> poll();

 private:
  std::string self_;
  std::string secret_, run_;
  std::string what_, token_;  // the running check's
  Command command_;
  std::optional<rdzv::Order> next_;  // to start when the running one ends
  CheckSink sink_;
};

// The helper's answer ("mflops=41234"), as a CHECKED for `what` (a network
// check's with `token`, so that node 0 knows which transfer failed).
rdzv::Checked checked_from(const std::string& what, const std::string& token, const Command::Outcome& outcome);

}  // namespace ddp::agent
