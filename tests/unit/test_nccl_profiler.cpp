// The GPU straggler figures' path without a GPU: the collective-time file
// (ddp/wire/nccl_stats.hpp) and our NCCL profiler plugin
// (agent/nccl_profiler/), loaded with dlopen and called as NCCL 2.28 calls
// it (init, a collective, its kernel's channels, finalize). NCCL itself is
// played here, not run: it needs a GPU. The GPU kit runs the plugin under
// the real NCCL (tests/gpu/).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ddp/wire/nccl_stats.hpp"
#include "nccl_profiler/nccl_profiler_abi.hpp"
#include "suites.hpp"

using namespace ddp;
namespace np = ddp::nccl_profiler;

START_TEST(the_collective_time_line_reads_back) {
  char line[kNcclStatsLine];
  format_nccl_stats(NcclStats{1234, 98765432109}, line);
  const std::string text(line, sizeof line);
  ck_assert_uint_eq(text.size(), 64);
  ck_assert(text.back() == '\n' && text.find('\0') == std::string::npos);  // one fixed-width line
  CK_CONTAINS(text, "collectives=1234 gpu_ns=98765432109 ");
  ck_assert((parse_nccl_stats(text) == NcclStats{1234, 98765432109}));
  ck_assert(!parse_nccl_stats(""));
  ck_assert(!parse_nccl_stats("collectives=1 gpu_ns="));
  ck_assert(!parse_nccl_stats("collectives=1 gpu_ns=2 extra"));
  ck_assert(!parse_nccl_stats("gpu_ns=2 collectives=1"));
  const std::string path = "/tmp/ddp-nccl-stats-" + std::to_string(getpid());
  std::filesystem::remove(path);
  ck_assert(!create_nccl_stats_file(path));
  ck_assert(!read_nccl_stats(path));  // empty: nothing written yet
  CK_CONTAINS(create_nccl_stats_file(path).value_or(""), "cannot create the collective-time file");  // never twice
  std::filesystem::remove(path);
}
END_TEST

START_TEST(the_plugin_adds_up_each_collectives_gpu_time) {
  void* lib = dlopen(DDP_TEST_NCCL_PROFILER, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(lib, "%s", dlerror());
  const auto* p = static_cast<const np::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  ck_assert_ptr_nonnull(p);
  ck_assert(!dlsym(lib, "ncclProfiler_v4"));  // an older NCCL loads nothing from it
  CK_STR_EQ(p->name, "slurm-ddp");
  // A worker started without the agent's file: no events asked for.
  unsetenv("DDP_NCCL_STATS_FILE");
  void* context = nullptr;
  int mask = -1;
  ck_assert_int_eq(p->init(&context, 1, &mask, "c0", 1, 2, 0, nullptr), np::kSuccess);
  ck_assert_int_eq(mask, 0);
  ck_assert_int_eq(p->finalize(context), np::kSuccess);
  // The agent's file: collectives and kernel channels.
  const std::string path = "/tmp/ddp-nccl-plugin-" + std::to_string(getpid());
  std::filesystem::remove(path);
  ck_assert(!create_nccl_stats_file(path));
  setenv("DDP_NCCL_STATS_FILE", path.c_str(), 1);
  ck_assert_int_eq(p->init(&context, 2, &mask, "c1", 2, 2, 1, nullptr), np::kSuccess);
  ck_assert_int_eq(mask, int(np::kColl | np::kKernelCh));
  for (std::uint64_t i = 0; i < 3; ++i) {
    np::EventDescr coll{};
    coll.type = np::kColl;
    coll.coll.func = "AllReduce";
    void* coll_handle = nullptr;
    p->start_event(context, &coll_handle, &coll);
    ck_assert_ptr_nonnull(coll_handle);  // a kernel channel's parent
    p->stop_event(coll_handle);          // enqueued: the kernel comes after
    for (std::uint8_t channel = 0; channel < 2; ++channel) {
      np::EventDescr ch{};
      ch.type = np::kKernelCh;
      ch.parent_obj = coll_handle;
      ch.kernel_ch.channel_id = channel;
      ch.kernel_ch.p_timer = 1000000 * (i + 1);
      void* ch_handle = nullptr;
      p->start_event(context, &ch_handle, &ch);
      np::StateArgs end{};
      end.kernel_ch_p_timer = ch.kernel_ch.p_timer + 4000000 + channel;  // 4 ms on the GPU
      p->record_event_state(ch_handle, np::kKernelChStop, &end);
      p->stop_event(ch_handle);
    }
  }
  np::EventDescr other{};
  other.type = np::kP2p;  // not asked for, but harmless
  void* h = nullptr;
  p->start_event(context, &h, &other);
  p->record_event_state(h, 9, nullptr);
  p->stop_event(h);
  ck_assert_int_eq(p->finalize(context), np::kSuccess);  // the last communicator: the totals written
  const auto stats = read_nccl_stats(path);
  ck_assert(stats.has_value());
  ck_assert_uint_eq(stats->collectives, 3);   // channel 0 of each
  ck_assert_uint_eq(stats->gpu_ns, 12000000);
  std::filesystem::remove(path);
  unsetenv("DDP_NCCL_STATS_FILE");
}
END_TEST

Suite* nccl_profiler_suite() {
  return make_suite("nccl_profiler", {the_collective_time_line_reads_back, the_plugin_adds_up_each_collectives_gpu_time});
}
