// How the CUDA backend's kernels cover their work: blocks of kThreads
// threads, each thread taking items first_index(), + index_stride(), ...
// (a grid-stride loop), so the grid can be capped. For the .cu files of
// trainer/cuda/ only.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace ddp::train::cuda {

// Threads per block: a multiple of the warp size (the reductions rely on
// whole warps) and small enough that every kernel fits any GPU.
inline constexpr int kThreads = 256;

// Blocks for n work items. Kernels loop with a grid stride, so capping the
// grid only makes each thread do more items; 2^16 blocks fill any GPU.
inline unsigned blocks_for(std::size_t n) {
  return unsigned(std::min<std::size_t>((n + kThreads - 1) / kThreads, std::size_t(1) << 16));
}

// Grid-stride loop indices in size_t: a buffer may hold more than 2^31 floats.
__device__ inline std::size_t first_index() { return std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::size_t index_stride() { return std::size_t(gridDim.x) * blockDim.x; }

}  // namespace ddp::train::cuda
