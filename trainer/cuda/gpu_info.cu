// Compiled by nvcc, linked with NCCL. Nothing here needs a GPU to run:
// ncclGetVersion and cudaRuntimeGetVersion answer without one.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "gpu_info.hpp"

namespace ddp::train {

// A device kernel so that this translation unit proves device code builds for
// the configured architectures; it is launched by the GPU smoke tests later.
__global__ void fill_kernel(float* out, float value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

std::string gpu_backend_description() {
  int nccl = 0;
  int runtime = 0;
  ncclGetVersion(&nccl);
  cudaRuntimeGetVersion(&runtime);
  return "CUDA runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
         ", NCCL " + std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + "." +
         std::to_string(nccl % 100) + " (compiled; GPU execution untested on this build machine)";
}

}  // namespace ddp::train
