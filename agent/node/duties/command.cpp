#include "node/duties/command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "ddp/base/parse.hpp"
#include "ddp/node/descriptors.hpp"

namespace ddp::agent {

namespace {

// The command and whatever it started (its process group).
void kill_all(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

}  // namespace

Command::~Command() {
  if (pid_ > 0) {
    kill_all(pid_);
    ::waitpid(pid_, nullptr, WNOHANG);  // never blocks: a process stuck in the kernel is left to it
  }
  if (out_ >= 0) ::close(out_);
}

Status Command::start(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::string& missing_hint, const Environment* env, StopSignals stop_signals) {
  if (argv.empty() || running()) return fail("internal error: a command without words, or one already running");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::optional<Environment::Block> block;  // built before fork: no allocation in the child
  if (env) block.emplace(*env);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(std::string("pipe(): ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return fail("fork(): " + why);
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: killing it kills what it started too
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ddp::cloexec_from(3);  // the command gets 0, 1 and 2 only
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent blocks the signals its signalfd reads
    if (stop_signals == StopSignals::Ignore)     // kept across exec
      for (const int sig : {SIGTERM, SIGINT, SIGHUP}) ::signal(sig, SIG_IGN);
    if (block)
      ::execvpe(args[0], args.data(), block->envp());
    else
      ::execvp(args[0], args.data());
    const std::string msg = argv[0] + ": " + std::strerror(errno) + (missing_hint.empty() ? "" : " " + missing_hint) + "\n";
    [[maybe_unused]] auto r = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::setpgid(pid, pid);  // also here: no race with the first kill
  pid_ = pid;
  out_ = fds[0];
  said_.clear();
  deadline_ = Clock::now() + timeout;
  killed_at_.reset();
  return Ok{};
}

// What the pipe holds now, 64 KiB at most (the rest waits for the next poll);
// the first kKeptBytes are kept.
void Command::read_some() {
  char buf[4096];
  for (std::size_t taken = 0; taken < 64 * 1024;) {
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    taken += std::size_t(n);
    if (said_.size() < kKeptBytes) said_.append(buf, std::min(std::size_t(n), kKeptBytes - said_.size()));
  }
}

std::optional<Command::Outcome> Command::poll() {
  if (pid_ <= 0) return std::nullopt;
  read_some();
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r < 0) {  // not ours to wait for (SIGCHLD ignored?): we cannot know that it worked
    said_ = std::string("cannot wait for it: ") + std::strerror(errno);
    return finish(1 << 8, false);
  }
  if (r == pid_) return finish(status, killed_at_.has_value());
  const auto now = Clock::now();
  if (!killed_at_) {
    if (now < deadline_) return std::nullopt;
    kill_all(pid_);
    killed_at_ = now;
    return std::nullopt;
  }
  if (now < *killed_at_ + kGiveUpAfterKill) return std::nullopt;
  said_ += "\n(killed at its deadline, but still there " + std::to_string(kGiveUpAfterKill.count()) +
           " s later: stuck in the kernel, e.g. on a hung file system; left behind)";
  return finish(9, true);
}

Command::Outcome Command::finish(int status, bool timed_out) {
  read_some();
  pid_ = -1;
  ::close(out_);
  out_ = -1;
  while (!said_.empty() && (said_.back() == '\n' || said_.back() == ' ')) said_.pop_back();
  if (said_.empty() && !timed_out && WIFSIGNALED(status)) said_ = "killed by " + signal_name(WTERMSIG(status));
  Outcome outcome;
  outcome.timed_out = timed_out;
  outcome.ok = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  outcome.said = std::move(said_);
  said_.clear();
  return outcome;
}

}  // namespace ddp::agent
