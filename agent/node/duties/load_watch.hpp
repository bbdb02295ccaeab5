// How this node's workers spend their time, seen from outside them (no change
// to the script): every 5 s, each worker's main thread's time on a CPU and
// time waiting for one (/proc/PID/schedstat: sum_exec_runtime, run_delay),
// and the time the cpu cgroup throttled them (cpu.stat, v1 and v2: a quota,
// cgroup.hpp). A LOAD carries each window to node 0, which compares the
// nodes (job/straggler.hpp).
//
// Why this shows a straggler: in data-parallel training every rank meets the
// others at each step's all-reduce. The fast ranks get there first and sleep
// (blocked in a collective: neither on a CPU nor waiting for one); the slow
// rank is never idle. A rank throttled by a quota or crowded by a neighbour
// waits for a CPU (the kernel counts throttled time in run_delay). A worker
// blocked on its output (a paused reader) sleeps too, so it is never called
// one; and while this agent holds its workers' output it sends no LOAD at all.
//
// On GPUs the CPU says little (CUDA's host thread spins while it waits for
// the GPU): there our NCCL profiler plugin in each worker adds up the GPU
// time of its collectives (ddp/wire/nccl_stats.hpp), and each window also
// carries each worker's share of it spent in them: the fast ranks' GPUs wait
// there for the slow one, which waits least.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/wire/nccl_stats.hpp"
#include "ddp/wire/rdzv_messages.hpp"

namespace ddp::agent {

// A thread's totals from /proc/PID/schedstat: ns on a CPU, ns waiting for one.
struct SchedTimes {
  std::uint64_t on_cpu_ns = 0, waiting_ns = 0;
  bool operator==(const SchedTimes&) const = default;
};
std::optional<SchedTimes> parse_schedstat(std::string_view text);

// What one worker, and the node's cgroup, did between two samples.
struct LoadSample {
  std::vector<std::optional<SchedTimes>> workers;  // by local rank; nullopt: ended
  std::optional<std::uint64_t> throttled_ns;
  std::chrono::steady_clock::time_point at;
  std::vector<std::optional<NcclStats>> nccl = {};  // by local rank: its collective-time file, when it has one
};

// The window between two samples as a LOAD (permille of its wall time,
// clamped to 0..1000); an ended worker counts as idle. The collectives'
// share only when every worker has figures in both samples.
rdzv::Load load_between(const LoadSample& before, const LoadSample& after, std::uint32_t attempt);

class LoadWatch {
 public:
  static constexpr std::chrono::seconds kWindow{5};
  // A new attempt's workers started.
  void begin_attempt() { last_.reset(); }
  // Every loop turn while the workers run (`pids` by local rank, -1 for one
  // that ended; `nccl_files` their collective-time files, or none): the
  // window just ended, if one did.
  std::optional<rdzv::Load> tick(std::uint32_t attempt, const std::vector<pid_t>& pids,
                                 const std::vector<std::string>& nccl_files = {});
  // The workers' output is held: this window says nothing (it starts again).
  void hold() { last_.reset(); }

 private:
  static LoadSample sample(const std::vector<pid_t>& pids, const std::vector<std::string>& nccl_files);
  std::optional<LoadSample> last_;
};

}  // namespace ddp::agent
