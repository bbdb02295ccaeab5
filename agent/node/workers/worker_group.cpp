#include "node/workers/worker_group.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "ddp/node/descriptors.hpp"

namespace ddp::agent {

WorkerGroup::~WorkerGroup() {
  if (running() > 0) stop(std::chrono::milliseconds(0));
  for (auto& w : workers_) close_exec_fd(w);
}

void WorkerGroup::close_exec_fd(Worker& w) {
  if (w.exec_fd >= 0) ::close(w.exec_fd);
  w.exec_fd = -1;
}

namespace {

// The errno an ended child's failed exec wrote to its pipe; nullopt when
// exec succeeded (the pipe closed on exec, with nothing written). The child
// wrote before it exited, so once it is reaped this never waits.
std::optional<int> exec_error(int fd) {
  int err = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &err, sizeof err);
    if (n == sizeof err) return err;
    if (n < 0 && errno == EINTR) continue;
    return std::nullopt;
  }
}

// Errors of exec that another try may not meet (memory, processes, open
// files, a binary being written, an I/O error): the run may restart.
bool transient(int err) {
  return err == EAGAIN || err == ENOMEM || err == ETXTBSY || err == EIO || err == EMFILE || err == ENFILE ||
         err == ESTALE || err == EINTR;
}

StartError cannot_execute(const std::string& command, int err) {
  std::string why = "cannot execute " + command + ": " + std::strerror(err);
  if (command.find('/') == std::string::npos) why += " (looked up on the job's PATH)";
  return {why, err == ENOENT ? 127 : 126, transient(err)};
}

// A descriptor above 0, 1 and 2, which a worker's stdio takes (an agent
// started with one of them closed would otherwise get it for a pipe).
int above_stdio(int fd) {
  if (fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

}  // namespace

// In the child, after fork: its own process group, its death with the
// agent, default signals, its open-files limit, its output and its CPUs,
// then exec. A failed exec writes its errno to `exec_fd` for the agent and
// exits with a shell's code.
void WorkerGroup::become_worker(const Launch& launch, char* const* argv, char* const* envp,
                                const sigset_t& child_sigmask, pid_t agent, int exec_fd) const {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != agent) ::_exit(127);  // the agent died before prctl
  // Default dispositions before unblocking: a signal pending from the agent
  // must not run a handler the agent's host process installed (exec would
  // reset it, but only once exec has happened).
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &child_sigmask, nullptr);
  if (workers_nofile_) ::setrlimit(RLIMIT_NOFILE, &*workers_nofile_);
  if (launch.stdout_fd >= 0) ::dup2(launch.stdout_fd, 1);
  if (launch.stderr_fd >= 0) ::dup2(launch.stderr_fd, 2);
  // A worker gets 0, 1 and 2 only: whatever else the agent holds (its
  // sockets, pipes, what it inherited from slurmstepd) closes on exec.
  ddp::cloexec_from(3);
  // The agent itself may be pinned to one CPU (Slurm 22.05 implies --exact
  // with --cpus-per-task); each worker gets its own planned CPUs instead.
  if (launch.cpus && ::sched_setaffinity(0, sizeof(cpu_set_t), &*launch.cpus) != 0) {
    static constexpr char kUnbound[] =
        "ddp-agent: warning: a worker cannot be pinned to its planned CPUs (not allowed here?); it runs unbound\n";
    [[maybe_unused]] auto r = ::write(2, kUnbound, sizeof kUnbound - 1);
  }
  // PATH lookup with the job's PATH (the agent's own environment).
  ::execvpe(argv[0], argv, envp);
  const int err = errno;  // to the agent, which says it once for the node
  [[maybe_unused]] auto r = ::write(exec_fd, &err, sizeof err);
  ::_exit(err == ENOENT ? 127 : 126);
}

std::optional<StartError> WorkerGroup::start(const std::vector<std::string>& command,
                                             const std::vector<Launch>& launches, const sigset_t& child_sigmask,
                                             const std::function<void(std::uint32_t)>& after_fork) {
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  const pid_t agent = ::getpid();
  stop(std::chrono::milliseconds(0));  // a previous attempt's workers, if any
  for (auto& w : workers_) close_exec_fd(w);
  workers_.clear();

  for (std::uint32_t local_rank = 0; local_rank < launches.size(); ++local_rank) {
    const Launch& launch = launches[local_rank];
    Environment::Block block(launch.env);  // built before fork: no allocation in the child
    // Closed by a successful exec; a failed one writes its errno (read at reap()).
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC | O_NONBLOCK) != 0 || (exec_pipe[0] = above_stdio(exec_pipe[0])) < 0 ||
        (exec_pipe[1] = above_stdio(exec_pipe[1])) < 0) {
      const std::string why = std::strerror(errno);
      stop(std::chrono::milliseconds(0));
      return StartError{"cannot start worker " + std::to_string(local_rank) + ": pipe(): " + why};
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      ::close(exec_pipe[0]);
      ::close(exec_pipe[1]);
      stop(std::chrono::milliseconds(0));
      return StartError{"cannot start worker " + std::to_string(local_rank) + ": fork(): " + why};
    }
    if (pid == 0) become_worker(launch, argv.data(), block.envp(), child_sigmask, agent, exec_pipe[1]);
    ::close(exec_pipe[1]);
    ::setpgid(pid, pid);  // also from the parent: no race with signal_all()
    workers_.push_back({pid, local_rank, true, exec_pipe[0]});
    if (after_fork) after_fork(local_rank);
  }
  command_ = command.front();
  return std::nullopt;
}

std::vector<WorkerExit> WorkerGroup::reap() {
  std::vector<WorkerExit> exits;
  for (auto& w : workers_) {
    if (!w.running) continue;
    int status = 0;
    const pid_t r = ::waitpid(w.pid, &status, WNOHANG);
    if (r != w.pid) continue;
    w.running = false;
    WorkerExit e;
    e.local_rank = w.local_rank;
    e.when = std::chrono::system_clock::now();
    if (const auto err = exec_error(w.exec_fd)) e.not_started = cannot_execute(command_, *err);
    close_exec_fd(w);
    if (WIFSIGNALED(status)) {
      e.signaled = true;
      e.signal = WTERMSIG(status);
    } else {
      e.exit_code = WEXITSTATUS(status);
    }
    exits.push_back(e);
  }
  return exits;
}

void WorkerGroup::signal_all(int sig) {
  for (const auto& w : workers_)
    if (w.running) ::kill(-w.pid, sig);
}

std::size_t WorkerGroup::abandon_running() {
  std::size_t n = 0;
  for (auto& w : workers_)
    if (w.running) {
      w.running = false;
      close_exec_fd(w);
      ++n;
    }
  return n;
}

namespace {

// The processes of process group `pgid` (/proc/PID/stat: the fifth field,
// after the command in parentheses, which may itself hold spaces and ')').
std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> members;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0, group = 0;
    if (rest >> state >> ppid >> group && group == pgid) members.push_back(pid_t(std::stol(name)));
  }
  return members;
}

}  // namespace

void WorkerGroup::abort_for_stack(std::uint32_t local_rank) {
  // The whole process group: the worker may be a wrapper (bash run.sh,
  // apptainer exec) around the Python that hangs. No core files: a GPU
  // worker's would be as large as its memory, on every stalled rank at once;
  // each member's limit is set from here first (prlimit, same user).
  const rlimit no_core{0, 0};
  for (const auto& w : workers_)
    if (w.running && w.local_rank == local_rank) {
      for (const pid_t pid : group_members(w.pid)) ::prlimit(pid, RLIMIT_CORE, &no_core, nullptr);
      ::kill(-w.pid, SIGABRT);
    }
}

std::vector<pid_t> WorkerGroup::pids() const {
  std::vector<pid_t> pids;
  for (const auto& w : workers_) {
    if (pids.size() <= w.local_rank) pids.resize(w.local_rank + 1, -1);
    if (w.running) pids[w.local_rank] = w.pid;
  }
  return pids;
}

std::size_t WorkerGroup::running() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w.running;
  return n;
}

void WorkerGroup::stop(std::chrono::milliseconds grace) {
  if (grace.count() > 0) {
    signal_all(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (running() > 0 && std::chrono::steady_clock::now() < deadline) {
      reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // Only groups whose leader we have not reaped: a reaped leader's pid may
  // already belong to someone else.
  for (auto& w : workers_)
    if (w.running) {
      ::kill(-w.pid, SIGKILL);
      ::waitpid(w.pid, nullptr, 0);
      w.running = false;
      close_exec_fd(w);
    }
}

}  // namespace ddp::agent
