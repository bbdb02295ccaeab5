#include "bad_node_hook.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "ddp/site/site_config.hpp"
#include "log.hpp"

namespace ddp::spank {

namespace {

constexpr auto kHookTimeout = std::chrono::seconds(10);

// Runs the hook with `env`, stdin from /dev/null, its output to slurmd's log,
// killed after kHookTimeout.
void run_hook(const std::string& hook, const std::vector<std::string>& env) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return for_admin("BadNodeHook: pipe: " + std::string(std::strerror(errno)));
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(hook.c_str()), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::closefrom(3);  // none of slurmstepd's descriptors
    ::execve(hook.c_str(), argv, envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  if (pid < 0) {
    ::close(out[0]);
    return for_admin("BadNodeHook: fork: " + std::string(std::strerror(errno)));
  }
  std::string said;
  const auto until = std::chrono::steady_clock::now() + kHookTimeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) == 0) {
      timed_out = true;
      ::kill(-pid, SIGKILL);  // its group (setsid), and itself should it not have got there yet
      ::kill(pid, SIGKILL);
      break;
    }
    char buf[1024];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (said.size() < 4096) said.append(buf, std::size_t(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string how = timed_out ? "killed after " + std::to_string(kHookTimeout.count()) + " s"
                          : WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                              : "signal " + std::to_string(WTERMSIG(status));
  for_admin("BadNodeHook " + hook + " (" + how + ")" + (said.empty() ? "" : ": " + said));
}

}  // namespace

void run_bad_node_hook(const std::string& hook, const BadNodes& report) {
  if (report.nodes.empty() || hook.empty()) return;  // no bad node; or no hook at this site
  if (auto trusted = check_trusted_program(hook, "BadNodeHook"); !trusted)
    return for_admin("BadNodeHook not run for " + report.where + ": " + trusted.error());
  const std::string job = std::to_string(report.job), step = std::to_string(report.step);
  for (const auto& bad : report.nodes)
    run_hook(hook, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_JOB_ID=" + job, "SLURM_STEP_ID=" + step,
                    "SLURM_JOB_UID=" + std::to_string(report.uid), "SLURM_JOB_USER=" + report.user,
                    "DDP_BAD_NODE=" + bad.node, "DDP_BAD_NODE_REASONS=" + bad.reasons,
                    "DDP_CLAIMED_BY=the job's own agents (user " + report.user + "), not verified"});
}

}  // namespace ddp::spank
