// WorkerGroup: the worker processes of one node for one attempt. Effects only:
// fork/exec, signals, reaping. Each worker leads its own process group so a
// signal reaches everything it started, and dies with the agent (PDEATHSIG) so
// an agent killed with SIGKILL leaves no orphans (torchrun's does).
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/environment.hpp"
#include "ddp/base/result.hpp"

namespace ddp::agent {

// Why the workers could not be started, and the exit code that stands for
// it: 127 when the command was not found, 126 when it cannot be executed (a
// shell's codes), 1 for anything else (fork, pipes, files). `transient`: an
// exec error another try may not meet (out of memory or processes).
struct StartError {
  std::string why;
  int exit_code = 1;
  bool transient = false;
};

struct WorkerExit {
  std::uint32_t local_rank = 0;
  std::optional<StartError> not_started;  // its command could not be executed (it exited 127 or 126)
  int exit_code = 0;  // when !signaled
  int signal = 0;     // when signaled
  bool signaled = false;
  std::chrono::system_clock::time_point when;
  bool failed() const { return signaled || exit_code != 0; }
  // The agent's exit code for this outcome (128 + signal, as shells do).
  int status_code() const { return signaled ? 128 + signal : exit_code; }
};

class WorkerGroup {
 public:
  // Node 0's coordinator holds one socket per node: the agent raises its own
  // soft open-files limit (ddp/node/limits.hpp) and gives the workers back the
  // limit they would have had, `workers_nofile` (none: the agent's own).
  explicit WorkerGroup(std::optional<rlimit> workers_nofile = std::nullopt) : workers_nofile_(workers_nofile) {}
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;
  ~WorkerGroup();  // kills whatever still runs: never leave workers behind

  // How worker i starts: its environment, its CPUs (pinned when set), and the
  // pipe ends that become its stdout and stderr (-1: inherit the agent's).
  struct Launch {
    Environment env;
    std::optional<cpu_set_t> cpus;
    int stdout_fd = -1;
    int stderr_fd = -1;
  };
  // Starts one process per launch, all running `command`. On failure the
  // workers already started are killed. `after_fork(i)` runs in the agent
  // once worker i is forked (to close its pipe ends there). Whether a
  // worker's exec failed comes with its exit (reap: WorkerExit::not_started).
  std::optional<StartError> start(const std::vector<std::string>& command, const std::vector<Launch>& launches,
                                  const sigset_t& child_sigmask, const std::function<void(std::uint32_t)>& after_fork);

  // Reaps every worker that has ended, without blocking; returns their exits in
  // the order they were reaped.
  std::vector<WorkerExit> reap();

  void signal_all(int sig);  // to each running worker's process group
  // Forgets the workers still running (stuck in the kernel after SIGKILL): no
  // more waits for them, here or at stop(); they are reaped by whoever
  // inherits them.
  std::size_t abandon_running();
  // SIGABRT to the worker's process group, if it runs, every member's
  // core-file limit set to 0 first: the stack dump of the hang watch
  // (Python's faulthandler), not a core dump.
  void abort_for_stack(std::uint32_t local_rank);
  std::size_t running() const;
  // By local rank: each worker's pid while it runs, else -1.
  std::vector<pid_t> pids() const;
  // Blocking: SIGTERM to every running worker, `grace` to end, then SIGKILL;
  // reaps all. For the end of the agent; while it serves, the agent stops its
  // workers without blocking (signal_all, reap, signal_all(SIGKILL)).
  void stop(std::chrono::milliseconds grace);

 private:
  struct Worker {
    pid_t pid = -1;
    std::uint32_t local_rank = 0;
    bool running = false;
    int exec_fd = -1;  // the read end of its exec pipe, until reaped
  };
  static void close_exec_fd(Worker& w);
  [[noreturn]] void become_worker(const Launch& launch, char* const* argv, char* const* envp,
                                  const sigset_t& child_sigmask, pid_t agent, int exec_fd) const;

  std::vector<Worker> workers_;
  std::string command_;  // the workers' command, for what a failed exec says
  std::optional<rlimit> workers_nofile_;
};

}  // namespace ddp::agent
