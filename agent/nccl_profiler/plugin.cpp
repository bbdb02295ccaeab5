// libnccl-profiler-ddp.so: NCCL's profiler plugin (nccl_profiler_abi.hpp)
// that the agent gives a GPU step's workers (NCCL_PROFILER_PLUGIN, unless
// the user set one) so that node 0 can name a GPU straggler with no change
// to the script (job/straggler.hpp). In each worker it adds up, over
// every communicator, the GPU time of every collective's kernel on its
// channel 0 (NCCL's GPU timer at the channel's start and end: the time the
// collective took on this rank's GPU, its wait for the slowest rank
// included) and writes the totals to DDP_NCCL_STATS_FILE, the file its agent
// created (wire/nccl_stats.hpp), at most every 200 ms and at the end.
//
// Without that file (a worker started another way) it asks NCCL for no
// events at all. It never fails a collective: every callback returns success
// and does nothing with what it does not know. Exported: ncclProfiler_v5
// alone (built with hidden visibility).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <new>

#include "ddp/wire/nccl_stats.hpp"
#include "nccl_profiler_abi.hpp"

namespace ddp::nccl_profiler {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWriteEvery = std::chrono::milliseconds(200);

// The process's totals, over all its communicators.
struct Totals {
  std::mutex lock;
  int communicators = 0;
  int fd = -1;
  NcclStats stats;
  Clock::time_point written;
};

Totals& totals() {
  static Totals t;
  return t;
}

void write_locked(Totals& t) {
  char line[kNcclStatsLine];
  format_nccl_stats(t.stats, line);
  [[maybe_unused]] const auto n = ::pwrite(t.fd, line, sizeof line, 0);
  t.written = Clock::now();
}

// A collective's handle: a kernel channel's parent must not be null.
char collective_mark;

// Channel 0 of a collective's kernel, from its start to its end.
struct KernelSpan {
  std::uint64_t start = 0, stop = 0;
};

Result init(void** context, std::uint64_t, int* activation_mask, const char*, int, int, int, Logger) {
  Totals& t = totals();
  std::lock_guard hold(t.lock);
  if (t.communicators++ == 0) {
    const char* path = std::getenv("DDP_NCCL_STATS_FILE");
    t.fd = path && *path ? ::open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
  }
  *activation_mask = t.fd >= 0 ? int(kColl | kKernelCh) : 0;
  *context = &t;
  return kSuccess;
}

Result start_event(void*, void** handle, EventDescr* descr) {
  *handle = nullptr;
  if (!descr) return kSuccess;
  if (descr->type == kColl) *handle = &collective_mark;
  if (descr->type == kKernelCh && descr->kernel_ch.channel_id == 0)
    *handle = new (std::nothrow) KernelSpan{descr->kernel_ch.p_timer, 0};
  return kSuccess;
}

Result record_event_state(void* handle, int state, StateArgs* args) {
  if (handle && handle != &collective_mark && state == kKernelChStop && args)
    static_cast<KernelSpan*>(handle)->stop = args->kernel_ch_p_timer;
  return kSuccess;
}

Result stop_event(void* handle) {
  if (!handle || handle == &collective_mark) return kSuccess;
  const auto* span = static_cast<KernelSpan*>(handle);
  Totals& t = totals();
  {
    std::lock_guard hold(t.lock);
    if (span->stop > span->start && t.fd >= 0) {
      ++t.stats.collectives;
      t.stats.gpu_ns += span->stop - span->start;
      if (Clock::now() - t.written >= kWriteEvery) write_locked(t);
    }
  }
  delete span;
  return kSuccess;
}

Result finalize(void*) {
  Totals& t = totals();
  std::lock_guard hold(t.lock);
  if (--t.communicators > 0 || t.fd < 0) return kSuccess;
  write_locked(t);
  ::close(t.fd);
  t.fd = -1;
  return kSuccess;
}

}  // namespace

}  // namespace ddp::nccl_profiler

extern "C" __attribute__((visibility("default"))) const ddp::nccl_profiler::ProfilerV5 ncclProfiler_v5{
    "slurm-ddp", ddp::nccl_profiler::init, ddp::nccl_profiler::start_event, ddp::nccl_profiler::stop_event,
    ddp::nccl_profiler::record_event_state, ddp::nccl_profiler::finalize};
