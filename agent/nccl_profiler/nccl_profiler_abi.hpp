// Our own declarations of NCCL's profiler plugin interface, version 5 (the
// newest NCCL 2.28 knows: PyTorch 2.11's wheels ship NCCL 2.28.9), written
// from its documentation (NVIDIA/nccl ext-profiler/README.md) and checked
// field by field against the layout NCCL 2.28.9 compiles (the offsets below,
// x86-64 and aarch64 LP64). Only what the plugin reads is named; the rest of
// the event descriptor's union is kept as bytes so that its size is NCCL's.
//
// NCCL dlopens the library NCCL_PROFILER_PLUGIN names (a path, or a name it
// turns into libnccl-profiler-NAME.so), looks for the data symbol
// ncclProfiler_v5 (then v4 ... v1, which this plugin does not offer: an older
// NCCL loads nothing from it), calls init once per communicator, and then the
// event callbacks from the application's thread and from its proxy thread,
// at once: the plugin must be thread-safe. A descriptor lives only for the
// call. Return values other than init's are ignored; when init fails NCCL
// goes on without a profiler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddp::nccl_profiler {

using Result = int;  // ncclResult_t: 0 success, 3 internal error, 4 invalid argument
inline constexpr Result kSuccess = 0;

// Event types, one bit each (the activation mask, the descriptor's `type`).
inline constexpr std::uint64_t kColl = 1u << 1;
inline constexpr std::uint64_t kP2p = 1u << 2;
inline constexpr std::uint64_t kKernelCh = 1u << 6;

// recordEventState's state for a kernel channel's end; its argument is the
// GPU timer then (ns, the GPU's %globaltimer).
inline constexpr int kKernelChStop = 22;

struct CollDescr {  // a collective, as enqueued
  std::uint64_t seq_number;
  const char* func;  // "AllReduce", ...
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
  void* parent_group;
};

struct KernelChDescr {  // one channel of a collective's kernel, started
  std::uint8_t channel_id;
  std::uint64_t p_timer;  // the GPU timer when the channel began this work (ns)
};

struct EventDescr {
  std::uint64_t type;  // one of the bits above
  void* parent_obj;    // the parent event's handle (a kernel channel's: its collective's)
  int rank;
  union {
    CollDescr coll;
    KernelChDescr kernel_ch;
    unsigned char others[88];  // the other events' members
  };
};

union StateArgs {
  std::size_t trans_size;
  int appended_proxy_ops;
  void* data;
  std::uint64_t kernel_ch_p_timer;  // kKernelChStop: the GPU timer at the channel's end
};

using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, std::uint64_t comm_id, int* activation_mask, const char* comm_name, int n_nodes,
                 int n_ranks, int rank, Logger log);
  Result (*start_event)(void* context, void** handle, EventDescr* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, StateArgs* args);
  Result (*finalize)(void* context);
};

// The layout NCCL 2.28.9 compiles: any difference is a plugin that reads
// garbage, so the build refuses it.
static_assert(offsetof(EventDescr, parent_obj) == 8 && offsetof(EventDescr, rank) == 16);
static_assert(offsetof(EventDescr, coll) == 24 && sizeof(EventDescr) == 112);
static_assert(offsetof(EventDescr, coll.func) == 32 && offsetof(EventDescr, coll.count) == 56);
static_assert(offsetof(EventDescr, coll.n_channels) == 80 && offsetof(EventDescr, coll.parent_group) == 104);
static_assert(offsetof(EventDescr, kernel_ch.channel_id) == 24 && offsetof(EventDescr, kernel_ch.p_timer) == 32);
static_assert(sizeof(StateArgs) == 8 && sizeof(ProfilerV5) == 48);

}  // namespace ddp::nccl_profiler
