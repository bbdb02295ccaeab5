#include "train/worker_events.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>

namespace ddp::train {
namespace {

volatile std::sig_atomic_t g_preempt_requested = 0;
extern "C" void on_sigusr1(int) { g_preempt_requested = 1; }

}  // namespace

void install_preempt_handler() { std::signal(SIGUSR1, on_sigusr1); }

bool take_preempt_request() {
  if (g_preempt_requested == 0) return false;
  g_preempt_requested = 0;
  return true;
}

void inject_faults(const TrainOptions& o, const WorkerIdentity& id, long long global_step) {
  if (id.attempt != 0 || id.rank != (o.crash_rank >= 0 ? o.crash_rank : id.world_size - 1)) return;
  if (global_step == o.crash_at_step) {
    std::fprintf(stderr, "ddp-train: fault injection: rank %d kills itself with SIGKILL at step %lld\n", id.rank,
                 global_step);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
  if (global_step == o.stall_at_step) {
    std::fprintf(stderr, "ddp-train: fault injection: rank %d stops making progress at step %lld\n", id.rank,
                 global_step);
    std::fflush(stderr);
    for (;;) ::pause();
  }
}

}  // namespace ddp::train
