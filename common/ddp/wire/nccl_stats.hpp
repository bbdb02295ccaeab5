// The collective-time file (DDP_NCCL_STATS_FILE) between a worker's NCCL,
// through our profiler plugin (agent/nccl_profiler/), and its agent's load
// watch (agent/node/duties/load_watch.hpp), written and read here:
//  - the agent creates it empty in its private run directory, one per worker,
//    and points NCCL_PROFILER_PLUGIN at the plugin (GPU steps, --ddp-stragglers);
//  - the plugin, inside the worker, adds up the GPU time of every collective
//    (each one's kernel, from NCCL's own GPU timer) and rewrites the file at
//    most every 200 ms: one pwrite of a fixed-width line at offset 0, so a
//    reader never sees half of one;
//  - the agent reads it every window: the share of the window this rank's GPU
//    spent in collectives. In data-parallel training the fast ranks wait
//    there for the slow one, which arrives last and waits least.
// This file has no dependency beyond the C++ library: the plugin builds it in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp {

struct NcclStats {
  std::uint64_t collectives = 0;  // collectives finished
  std::uint64_t gpu_ns = 0;       // their kernels' time on the GPU, summed
  bool operator==(const NcclStats&) const = default;
};

// "collectives=N gpu_ns=T", blank-padded to kNcclStatsLine - 1 bytes and a newline.
inline constexpr std::size_t kNcclStatsLine = 64;
void format_nccl_stats(const NcclStats& stats, char (&line)[kNcclStatsLine]);
std::optional<NcclStats> parse_nccl_stats(std::string_view text);

// The agent's side: `path`, a new empty file (an existing name, a link or a
// FIFO is refused), for the worker's plugin to write. An error says why.
std::optional<std::string> create_nccl_stats_file(const std::string& path);

// The file's figures; nullopt when it is missing, empty (nothing written yet) or not ours.
std::optional<NcclStats> read_nccl_stats(const std::string& path);

}  // namespace ddp
