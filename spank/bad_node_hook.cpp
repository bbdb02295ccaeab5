#include "bad_node_hook.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "ddp/base/parse.hpp"
#include "log.hpp"

namespace ddp::spank {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kSaidBytes = 1024;                 // of a run's output, for the log
constexpr auto kReapWait = std::chrono::milliseconds(1000);  // for a run killed with SIGKILL to go

int ms_until(Clock::time_point t) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return int(std::clamp<long long>(left, 0, 60'000));
}

// In the child of a multithreaded slurmstepd: async-signal-safe calls only.
// Stdin /dev/null, stdout and stderr the pipe, the program on descriptor 3
// (left open across the exec for a script, whose interpreter reads
// /dev/fd/3), nothing else of slurmstepd's; signals as a new process has them.
[[noreturn]] void exec_hook(const TrustedProgram& program, int out, char* const argv[], char* const envp[]) {
  ::setsid();
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // SIG_IGN would outlive the exec
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Moved above 3 first, so that the dup2s below never overwrite one another.
  const int p = ::fcntl(program.fd(), F_DUPFD_CLOEXEC, 10), o = ::fcntl(out, F_DUPFD_CLOEXEC, 10),
            n = ::fcntl(null, F_DUPFD_CLOEXEC, 10);
  if (p >= 0 && o >= 0 && n >= 0 && ::dup2(n, 0) == 0 && ::dup2(o, 1) == 1 && ::dup2(o, 2) == 2 &&
      ::dup2(p, 3) == 3 && (program.script() || ::fcntl(3, F_SETFD, FD_CLOEXEC) == 0)) {
    ::closefrom(4);
    ::fexecve(3, argv, envp);
  }
  char msg[40] = "cannot execute it: errno ";
  std::size_t at = std::strlen(msg), digits = 0;
  for (int e = errno; digits == 0 || e > 0; e /= 10) ++digits, msg[at + 6 - digits] = char('0' + e % 10);
  std::memmove(msg + at, msg + at + 6 - digits, digits);
  msg[at + digits] = '\n';
  if (::write(2, msg, at + digits + 1) < 0) ::_exit(127);
  ::_exit(127);
}

// What the pipe holds now, 64 KiB at most (a hook that writes without end
// must not keep us from its deadline), without waiting; `open` false at its
// end.
void read_available(int fd, std::string& said, bool& open) {
  char buf[4096];
  for (int reads = 0; reads < 16; ++reads) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) open = false;
    if (n <= 0) return;  // EAGAIN: nothing more now
    said.append(buf, std::min(std::size_t(n), kSaidBytes - std::min(kSaidBytes, said.size())));
  }
}

enum class Child { Running, Ended, Gone };

// Where `pid` stands; an ended child is left unreaped, so that its process
// group's id stays its own until the group is killed. Gone: no child of ours
// to wait for (ECHILD), nothing to kill either.
Child child_state(pid_t pid) {
  siginfo_t info{};
  int rc;
  while ((rc = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)) < 0 && errno == EINTR) {
  }
  if (rc < 0) return Child::Gone;
  return info.si_pid == pid ? Child::Ended : Child::Running;
}

// Its status, reaped within kReapWait; nullopt when it did not end even so
// (a process stuck in the kernel: left to init once slurmstepd exits).
std::optional<int> reap(pid_t pid) {
  const auto until = Clock::now() + kReapWait;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (Clock::now() >= until) return std::nullopt;
    ::usleep(2000);
  }
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return int(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;  // polled instead
#endif
}

struct RunEnd {
  std::string how;  // "exit 0", "killed at the deadline"...
  bool ok = false;
  std::string said;
};

// Watches the run until it ends or `deadline`: its output read as it comes,
// its end seen through a pidfd (or polled: a kernel before 5.3).
RunEnd watch(pid_t pid, int out, Clock::time_point deadline) {
  RunEnd end;
  const int pidfd = open_pidfd(pid);
  bool out_open = true, timed_out = false;
  int backoff = 1;
  Child state;
  while ((state = child_state(pid)) == Child::Running) {
    const int left = ms_until(deadline);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out, POLLIN, 0};
    if (pidfd >= 0) fds[n++] = {pidfd, POLLIN, 0};
    ::poll(fds, n, pidfd >= 0 ? left : std::min(left, backoff));  // EINTR: round again
    backoff = std::min(backoff * 2, 50);
    if (out_open) read_available(out, end.said, out_open);
  }
  if (pidfd >= 0) ::close(pidfd);
  if (state != Child::Gone) ::kill(-pid, SIGKILL);  // its process group: what it left running, or all of it
  if (timed_out) ::kill(pid, SIGKILL);             // should it not have reached setsid()
  if (out_open) read_available(out, end.said, out_open);
  const auto status = reap(pid);
  if (timed_out)
    end.how = "killed at the deadline";
  else if (state == Child::Gone)
    end.how = "ended, its status unknown";
  else if (!status)
    end.how = "did not end after SIGKILL";
  else if (WIFEXITED(*status))
    end.how = "exit " + std::to_string(WEXITSTATUS(*status));
  else
    end.how = "killed by " + signal_name(WTERMSIG(*status));
  end.ok = !timed_out && status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  while (!end.said.empty() && end.said.back() == '\n') end.said.pop_back();
  return end;
}

RunEnd run_once(const TrustedProgram& program, const HookRun& run, Clock::time_point deadline) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {"not started: pipe: " + std::string(std::strerror(errno)), false, ""};
  ::fcntl(out[0], F_SETFL, O_NONBLOCK);  // only our end: the hook's writes block as usual
  std::vector<char*> envp;
  for (const auto& e : run.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  char* argv[] = {const_cast<char*>(program.path().c_str()), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) exec_hook(program, out[1], argv, envp.data());
  const int err = errno;
  ::close(out[1]);
  if (pid < 0) {
    ::close(out[0]);
    return {"not started: fork: " + std::string(std::strerror(err)), false, ""};
  }
  RunEnd end = watch(pid, out[0], deadline);
  ::close(out[0]);
  return end;
}

std::string names(const std::vector<HookRun>& runs, std::size_t from) {
  std::string text;
  for (std::size_t i = from; i < runs.size() && i < from + 5; ++i) text += (text.empty() ? "" : ", ") + runs[i].label;
  return runs.size() - from > 5 ? text + ", ..." : text;
}

}  // namespace

std::vector<std::string> run_hook(const TrustedProgram& program, const std::vector<HookRun>& runs,
                                  std::chrono::milliseconds budget) {
  const auto deadline = Clock::now() + budget;
  const std::string hook = "BadNodeHook " + program.path();
  std::vector<std::string> log;
  std::size_t done = 0, unlogged = 0, unlogged_failed = 0;
  for (; done < runs.size() && Clock::now() < deadline; ++done) {
    const RunEnd end = run_once(program, runs[done], deadline);
    if (done < kMaxLoggedRuns) {
      log.push_back(hook + " for " + runs[done].label + " (" + end.how + ")" + (end.said.empty() ? "" : ": " + end.said));
    } else {
      ++unlogged;
      unlogged_failed += end.ok ? 0 : 1;
    }
  }
  if (unlogged > 0)
    log.push_back(hook + ": " + std::to_string(unlogged) + " more run(s), " + std::to_string(unlogged_failed) +
                  " of them failed (not logged one by one)");
  if (done < runs.size())
    log.push_back(hook + ": every run of a step together has " + seconds_text(budget) + ", spent; not run for " +
                  std::to_string(runs.size() - done) + " node(s): " + names(runs, done));
  return log;
}

void run_bad_node_hook(const std::string& hook, const BadNodes& report) {
  if (report.nodes.empty() || hook.empty()) return;  // no bad node; or no hook at this site
  auto program = open_trusted_program(hook, "BadNodeHook");
  if (!program) return for_admin("BadNodeHook not run for " + report.where + ": " + program.error());
  const std::string job = std::to_string(report.job), step = std::to_string(report.step);
  std::vector<HookRun> runs;
  for (const auto& bad : report.nodes)
    runs.push_back({bad.node,
                    {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_JOB_ID=" + job, "SLURM_STEP_ID=" + step,
                     "SLURM_JOB_UID=" + std::to_string(report.uid), "SLURM_JOB_USER=" + report.user,
                     "DDP_BAD_NODE=" + bad.node, "DDP_BAD_NODE_REASONS=" + bad.reasons,
                     "DDP_CLAIMED_BY=the job's own agents (user " + report.user + "), not verified"}});
  for (const auto& line : run_hook(*program, runs, kHookBudget)) for_admin(report.where + ": " + line);
}

}  // namespace ddp::spank
