// Bounds on what a user may ask for and a plan may hold; far above any real
// node and step, low enough that no value a user types makes us allocate
// without limit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddp {

inline constexpr std::uint64_t kMaxWorkersPerNode = 1024;
inline constexpr std::uint64_t kMaxRestarts = 1000;
inline constexpr std::uint64_t kMaxNodes = 1u << 20;

// Bounds on what a user hands the plugin where it runs as root (slurmstepd),
// applied before any parser, ours or Slurm's, sees the text (spank/SECURITY.md):
// a --ddp* option's value; one variable of the job's environment; a node list
// of the job's environment (SLURM_STEP_NODELIST: 65536 nodes named one by one
// with 15 characters each fit).
inline constexpr std::size_t kMaxOptionValue = 4096;
inline constexpr std::size_t kMaxJobEnvValue = 64 * 1024;
inline constexpr std::size_t kMaxNodeListBytes = 1024 * 1024;

}  // namespace ddp
