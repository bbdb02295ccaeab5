// The GPU backend's entry points (gpu_backend.hpp). Compiled by nvcc, linked
// with NCCL. gpu_backend_description() needs no GPU: ncclGetVersion and
// cudaRuntimeGetVersion answer without one.
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "cuda/cuda_context.cuh"
#include "cuda/nccl_init.cuh"
#include "gpu_backend.hpp"

namespace ddp::train {

std::string gpu_backend_description() {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  return "CUDA runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", NCCL " +
         cuda::nccl_version_text();
}

Result<GpuBackend> make_gpu_backend(const GpuBackendConfig& config) {
  // Selects the device (cudaSetDevice(local_rank)) before anything else touches CUDA.
  auto context = cuda::make_cuda_context(config.local_rank);
  if (!context) return fail(context.error());
  GpuBackend backend;
  backend.ops = cuda::make_cuda_ops(*context, config.matmul);
  auto comm = cuda::make_nccl_collectives(*context, config);
  if (!comm) return fail(comm.error());
  backend.comm = std::move(comm).value();
  return Result<GpuBackend>(std::move(backend));
}

}  // namespace ddp::train
