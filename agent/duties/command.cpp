#include "duties/command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace ddp::agent {

Command::~Command() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

Status Command::start(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::string& missing_hint, const Environment* env) {
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
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the agent blocks the signals its signalfd reads
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
  pid_ = pid;
  out_ = fds[0];
  said_.clear();
  deadline_ = std::chrono::steady_clock::now() + timeout;
  return Ok{};
}

std::optional<Command::Outcome> Command::poll() {
  if (pid_ <= 0) return std::nullopt;
  char buf[512];
  ssize_t n;
  while ((n = ::read(out_, buf, sizeof buf)) > 0)
    if (said_.size() < 64 * 1024) said_.append(buf, std::size_t(n));
  Outcome outcome;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r < 0) {  // not ours to wait for (SIGCHLD ignored?): we cannot know that it worked
    said_ = std::string("cannot wait for it: ") + std::strerror(errno);
    status = 1 << 8;
    r = pid_;
  }
  if (r == 0 && std::chrono::steady_clock::now() < deadline_) return std::nullopt;
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    outcome.timed_out = true;
  }
  while ((n = ::read(out_, buf, sizeof buf)) > 0)
    if (said_.size() < 64 * 1024) said_.append(buf, std::size_t(n));
  pid_ = -1;
  ::close(out_);
  out_ = -1;
  while (!said_.empty() && (said_.back() == '\n' || said_.back() == ' ')) said_.pop_back();
  outcome.ok = !outcome.timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  outcome.said = std::move(said_);
  said_.clear();
  return outcome;
}

}  // namespace ddp::agent
