// Bounds on what a user may ask for and a plan may hold; far above any real
// node and step, low enough that no value a user types makes us allocate
// without limit.
#pragma once

#include <cstdint>

namespace ddp {

inline constexpr std::uint64_t kMaxWorkersPerNode = 1024;
inline constexpr std::uint64_t kMaxRestarts = 1000;
inline constexpr std::uint64_t kMaxNodes = 1u << 20;

}  // namespace ddp
