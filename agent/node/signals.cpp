#include "node/signals.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

namespace ddp::agent {

namespace {
constexpr int kTerminating[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr int kForwarded[] = {SIGUSR1, SIGUSR2};
}  // namespace

SignalFd::SignalFd() {
  sigemptyset(&handled_);
  sigaddset(&handled_, SIGCHLD);
  sigaddset(&handled_, SIGPIPE);
  for (int s : kTerminating) sigaddset(&handled_, s);
  for (int s : kForwarded) sigaddset(&handled_, s);
  sigprocmask(SIG_BLOCK, &handled_, &previous_);
  fd_ = signalfd(-1, &handled_, SFD_CLOEXEC | SFD_NONBLOCK);
}

SignalFd::~SignalFd() {
  if (fd_ >= 0) close(fd_);
  sigprocmask(SIG_SETMASK, &previous_, nullptr);
}

int SignalFd::next() {
  signalfd_siginfo info{};
  if (read(fd_, &info, sizeof info) != sizeof info) return 0;
  return int(info.ssi_signo);
}

bool is_terminating(int sig) {
  for (int s : kTerminating)
    if (s == sig) return true;
  return false;
}

}  // namespace ddp::agent
