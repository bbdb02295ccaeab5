// This node's failures as values (wire/failure.hpp), made from what its agent
// sees: a worker's exit, workers that could not start, and the lines of
// stderr that go with them, and a hang's culprit.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/failure.hpp"
#include "node/duties/hang_rule.hpp"
#include "node/workers/worker_group.hpp"

namespace ddp::agent {

// Where this node's failures happen: the attempt, the node, its first rank.
struct FailureSite {
  std::uint32_t attempt = 0;
  std::uint32_t node = 0;
  std::string host;
  std::uint32_t rank_base = 0;
};

// "HH:MM:SS" on this node's clock.
std::string local_time(std::chrono::system_clock::time_point t);

// The part of a worker's stderr a report carries, 4 KiB at most: its newest
// lines, or with `from` set the lines from that index on (a hang's stack
// dump, which begins there).
std::string stderr_excerpt(const std::vector<std::string>& lines, std::size_t from);
std::string stderr_excerpt(const std::vector<std::string>& lines);

// A worker that exited with a code other than 0, or that a signal killed,
// classed (failure_class.hpp); `oom_killed`: its cgroup's OOM killer struck.
Failure exit_failure(const FailureSite& site, const WorkerExit& exit, std::string tail, std::string error_file,
                     bool oom_killed = false);
// Worker `local_rank` of this node could not be started (its command cannot
// be executed), or none could (fork, pipes, files): what failed, and its
// exit code. A transient exec error (out of memory or processes) is a plain
// exit, which --ddp-restarts may retry; any other is the class setup.
Failure start_failure(const FailureSite& site, const StartError& error, std::uint32_t local_rank);
// The culprit of a hang (duties/hang_rule.hpp): hang.stalled[culprit],
// stalled in `where`; `exit` how it ended after SIGABRT, if it has;
// `stderr_lines` its stderr's last lines (its stack dump among them).
Failure hang_failure(const FailureSite& site, const Hang& hang, std::size_t culprit, StalledIn where,
                     std::chrono::milliseconds timeout, const std::optional<WorkerExit>& exit,
                     const std::vector<std::string>& stderr_lines, std::string error_file);

}  // namespace ddp::agent
