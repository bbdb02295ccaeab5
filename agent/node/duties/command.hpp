// A short command the agent runs beside its event loop without blocking it:
// Slurm's scontrol (requeue.hpp), the site's node health check (HealthCheck=
// in ddp.conf). Started in a process group of its own, then polled from the
// loop; stdout and stderr together are its answer, the first 64 KiB kept.
// Each poll reads at most 64 KiB and never waits: a chatty command cannot
// hold the loop, and one that SIGKILL does not end within 5 s (stuck in the
// kernel: a hung NFS server, a dead device) is given up, said, and left to
// the kernel. Killed at its deadline, and when destroyed.
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
    bool timed_out = false;  // killed at the deadline (and perhaps still there: `said` says so)
    std::string said;        // its output, trailing blanks trimmed
  };
  static constexpr std::size_t kKeptBytes = 64 * 1024;
  static constexpr std::chrono::seconds kGiveUpAfterKill{5};

  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  ~Command();

  // Whether the command ignores the terminating signals (SIGTERM, SIGINT,
  // SIGHUP). A question to slurmctld asked while Slurm stops the step must
  // be answered: Slurm signals every process of the step, and a command the
  // agent starts just before its own signal comes would die of it, leaving
  // the question unanswered. Its deadline still ends it (SIGKILL).
  enum class StopSignals { Obey, Ignore };
  // argv[0] is looked up in PATH. `missing_hint` follows the error a command
  // that cannot be executed prints ("is slurm-client installed?").
  Status start(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
               const std::string& missing_hint, const Environment* env = nullptr,
               StopSignals stop_signals = StopSignals::Obey);
  bool running() const { return pid_ > 0; }
  // nullopt while it runs (and before start); then its outcome, once.
  std::optional<Outcome> poll();

 private:
  using Clock = std::chrono::steady_clock;
  void read_some();
  Outcome finish(int status, bool timed_out);

  pid_t pid_ = -1;
  int out_ = -1;
  std::string said_;
  Clock::time_point deadline_;
  std::optional<Clock::time_point> killed_at_;
};

}  // namespace ddp::agent
