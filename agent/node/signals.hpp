// The signals the agent handles itself, through a signalfd in its event loop,
// instead of dying of them: terminating ones (SIGTERM, SIGINT, SIGHUP,
// SIGQUIT) end the run; USR1 and USR2 (Slurm's warning: `sbatch --signal`)
// are forwarded to the workers while the run goes on; SIGCHLD says a worker
// ended; SIGPIPE becomes an error return of the write that met a closed pipe.
#pragma once

#include <signal.h>

namespace ddp::agent {

class SignalFd {
 public:
  SignalFd();  // blocks the signals above; fd() < 0 when signalfd failed
  ~SignalFd();  // closes it and restores the signal mask
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_; }
  // The mask before ours: what the workers get.
  const sigset_t& previous_mask() const { return previous_; }
  // The next pending signal, or 0.
  int next();

 private:
  sigset_t handled_{};
  sigset_t previous_{};
  int fd_ = -1;
};

bool is_terminating(int sig);

}  // namespace ddp::agent
