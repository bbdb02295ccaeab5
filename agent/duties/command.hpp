// A short command the agent runs beside its event loop without blocking it:
// Slurm's scontrol (requeue.hpp), the site's node health check (HealthCheck=
// in ddp.conf). Started, then polled from the loop; stdout and stderr
// together are its answer. Killed at its deadline, and when destroyed.
// (Its pid is waited for by pid, so the workers' reaping never takes it.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/environment.hpp"
#include "ddp/base/result.hpp"

namespace ddp::agent {

class Command {
 public:
  struct Outcome {
    bool ok = false;         // exited 0
    bool timed_out = false;  // killed at the deadline
    std::string said;        // its output, trailing blanks trimmed
  };

  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  ~Command();

  // argv[0] is looked up in PATH. `missing_hint` follows the error a command
  // that cannot be executed prints ("is slurm-client installed?").
  Status start(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
               const std::string& missing_hint, const Environment* env = nullptr);
  bool running() const { return pid_ > 0; }
  // nullopt while it runs (and before start); then its outcome, once.
  std::optional<Outcome> poll();

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string said_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace ddp::agent
