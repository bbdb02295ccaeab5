#include "bad_node_hook.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "ddp/site/site_config.hpp"
#include "ddp/wire/bad_node_report.hpp"
#include "hostlist.hpp"
#include "log.hpp"

namespace ddp::spank {

namespace {

constexpr auto kHookTimeout = std::chrono::seconds(10);

// kReportDir: made if missing; root's, and writable by root only, or another
// user could put something of theirs where we make the FIFO.
Status check_report_dir() {
  if (::mkdir(kReportDir, 0755) != 0 && errno != EEXIST)
    return fail(std::string("cannot make ") + kReportDir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(kReportDir, &st) != 0) return fail(std::string("cannot check ") + kReportDir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail(std::string(kReportDir) + " must be a directory owned by root and writable by root only; fix with: " +
                "rm -rf " + kReportDir + " (the plugin makes it again)");
  return Ok{};
}

// What the agent wrote, up to a little past the report's bound.
std::string drain(int fd) {
  std::string text;
  char buf[4096];
  while (text.size() <= kMaxReportBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: nothing more; 0: no writer left
    text.append(buf, std::size_t(n));
  }
  return text;
}

// The job's nodes as slurmctld has them: the job's environment is the
// user's to set, and would let a report name any node.
Result<std::string> job_nodes(std::uint32_t job) {
  job_info_msg_t* info = nullptr;
  if (slurm_compat::load_job(&info, job) != SLURM_SUCCESS || !info || info->record_count < 1) {
    const std::string why = slurm_strerror(slurm_compat::last_error());
    if (info) slurm_free_job_info_msg(info);
    return fail("slurmctld did not tell job " + std::to_string(job) + "'s nodes: " + why);
  }
  std::string nodes = info->job_array[0].nodes ? info->job_array[0].nodes : "";
  slurm_free_job_info_msg(info);
  return nodes;
}

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

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

}  // namespace

Result<ReportFifo> make_report_fifo(std::uint32_t job, std::uint32_t step, uid_t uid, gid_t gid) {
  if (auto dir = check_report_dir(); !dir) return fail(dir.error());
  ReportFifo fifo{std::string(kReportDir) + "/" + std::to_string(job) + "." + std::to_string(step), -1};
  ::unlink(fifo.path.c_str());  // a slurmstepd that died before its exit left it
  if (::mkfifo(fifo.path.c_str(), 0600) != 0)
    return fail("cannot make " + fifo.path + ": " + std::strerror(errno));
  fifo.fd = ::open(fifo.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fifo.fd < 0 || ::fchown(fifo.fd, uid, gid) != 0) {
    const std::string why = std::strerror(errno);
    if (fifo.fd >= 0) ::close(fifo.fd);
    ::unlink(fifo.path.c_str());
    return fail("cannot open " + fifo.path + " for the job's user: " + why);
  }
  return fifo;
}

void run_bad_node_hook(spank_t sp, const std::string& hook, ReportFifo& fifo) {
  const std::string text = drain(fifo.fd);
  ::close(fifo.fd);
  ::unlink(fifo.path.c_str());
  fifo.fd = -1;
  if (text.empty() || hook.empty()) return;  // nothing kept out; or the step never got to its settings
  std::uint32_t job = 0, step = 0;
  uid_t uid = 0;
  spank_get_item(sp, S_JOB_ID, &job);
  spank_get_item(sp, S_JOB_STEPID, &step);
  spank_get_item(sp, S_JOB_UID, &uid);
  const std::string where = "job " + std::to_string(job) + "." + std::to_string(step);
  const auto nodes = job_nodes(job);
  if (!nodes) return for_admin("BadNodeHook not run for " + where + ": " + nodes.error());
  const auto report = read_bad_node_report(text, [&](const std::string& n) { return hostlist_contains(*nodes, n); });
  for (const auto& why : report.refused)
    for_admin("BadNodeHook: " + where + " (user " + user_name(uid) + "): a line of its report refused: " + why);
  if (report.nodes.empty()) return;
  if (auto trusted = check_trusted_program(hook, "BadNodeHook"); !trusted)
    return for_admin("BadNodeHook not run for " + where + ": " + trusted.error());
  for (const auto& bad : report.nodes)
    run_hook(hook, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_JOB_ID=" + std::to_string(job),
                    "SLURM_STEP_ID=" + std::to_string(step), "SLURM_JOB_UID=" + std::to_string(uid),
                    "SLURM_JOB_USER=" + user_name(uid), "DDP_BAD_NODE=" + bad.node,
                    "DDP_BAD_NODE_REASONS=" + bad.reasons, "DDP_CLAIMED_BY=the job's own agents (user " +
                    user_name(uid) + "), not verified"});
}

}  // namespace ddp::spank
