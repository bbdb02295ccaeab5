#include "requeue.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kScontrolTimeout{30};
}

Requeue::~Requeue() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

Status Requeue::start(std::uint32_t job_id, const std::string& scontrol) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fail(std::string("pipe(): ") + std::strerror(errno));
  const std::string id = std::to_string(job_id);
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
    ::execlp(scontrol.c_str(), scontrol.c_str(), "requeue", id.c_str(), static_cast<char*>(nullptr));
    const std::string msg = scontrol + ": " + std::strerror(errno) + " (is slurm-client installed on node 0?)\n";
    [[maybe_unused]] auto r = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  pid_ = pid;
  out_ = fds[0];
  said_.clear();
  job_id_ = job_id;
  deadline_ = std::chrono::steady_clock::now() + kScontrolTimeout;
  return Ok{};
}

std::optional<Status> Requeue::poll() {
  if (pid_ <= 0) return std::nullopt;
  char buf[512];
  ssize_t n;
  while ((n = ::read(out_, buf, sizeof buf)) > 0) said_.append(buf, std::size_t(n));
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r < 0) {  // not ours to wait for (SIGCHLD ignored?): we cannot know that it worked
    said_ = std::string("cannot wait for scontrol: ") + std::strerror(errno);
    status = 1 << 8;
    r = pid_;
  }
  if (r == 0 && std::chrono::steady_clock::now() < deadline_) return std::nullopt;
  if (r == 0) {  // past the deadline: slurmctld does not answer
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    said_ = "no answer from slurmctld within " + std::to_string(kScontrolTimeout.count()) + " s";
    status = 1 << 8;
  }
  while ((n = ::read(out_, buf, sizeof buf)) > 0) said_.append(buf, std::size_t(n));
  pid_ = -1;
  ::close(out_);
  out_ = -1;
  while (!said_.empty() && (said_.back() == '\n' || said_.back() == ' ')) said_.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status(Ok{});
  return Status(fail("scontrol requeue " + std::to_string(job_id_) + ": " + (said_.empty() ? "failed" : said_)));
}

}  // namespace ddp::agent
