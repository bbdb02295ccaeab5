// What CudaOps (cuda_ops.cu) and NcclCollectives (nccl_collectives.cu) share:
// the device, the compute stream every Ops call enqueues on, and the cuBLAS
// handle bound to it; plus the error-checking macros of the CUDA backend.
// Internal to trainer/cuda/: nvcc compiles everything that includes it (C++17).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "ddp/base/result.hpp"
#include "gpu_backend.hpp"
#include "model/ops.hpp"
#include "process_group/collectives.hpp"

namespace ddp::train::cuda {

struct CudaContext {
  int device = 0;
  // Created non-blocking: it never waits for the legacy default stream, so a
  // library that uses stream 0 cannot serialise our work behind its own.
  // Every Ops call enqueues here; NCCL orders itself after it with events.
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;  // cublasSetStream(cublas, stream)
  // cuBLAS's workspace, ours (cublasSetWorkspace): cuBLAS then allocates
  // nothing while a step is being captured into a CUDA graph.
  void* cublas_workspace = nullptr;

  CudaContext() = default;
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext();
};

// Picks the device of `local_rank` among the visible ones (device 0 when only
// one is visible: the launcher gave each worker its own), makes it current on
// the calling thread, creates the stream and the cuBLAS handle. Every later
// Ops call must come from a thread where that device is current (the trainer
// makes them all from its main thread, the one that calls this).
Result<std::shared_ptr<CudaContext>> make_cuda_context(int local_rank);

std::unique_ptr<Ops> make_cuda_ops(std::shared_ptr<CudaContext> context, MatmulPrecision matmul);
Result<std::unique_ptr<Collectives>> make_nccl_collectives(std::shared_ptr<CudaContext> context,
                                                           const GpuBackendConfig& config);

// "CUDA error at file:line: call: message (name); hint" and the like.
std::string cuda_error_text(cudaError_t err, const char* call, const char* file, int line);
std::string cublas_error_text(cublasStatus_t status, const char* call, const char* file, int line);
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm, const char* call, const char* file, int line);

// Prints "ddp-train: <message>" to stderr and ends the process with status 1
// at once (_Exit, after flushing stdio: no destructors run). For errors
// inside Ops methods, which return nothing: a failed kernel or cuBLAS call
// leaves the GPU state undefined, so the worker stops (llm.c does the same)
// and the launcher stops the others.
[[noreturn]] void die(const std::string& message);

}  // namespace ddp::train::cuda

// Fatal checks, for code that cannot return an error (the Ops methods).
#define CUDA_CHECK(call)                                                                                 \
  do {                                                                                                   \
    const cudaError_t ddp_err_ = (call);                                                                 \
    if (ddp_err_ != cudaSuccess)                                                                         \
      ::ddp::train::cuda::die(::ddp::train::cuda::cuda_error_text(ddp_err_, #call, __FILE__, __LINE__)); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                                    \
  do {                                                                                                        \
    const cublasStatus_t ddp_status_ = (call);                                                                \
    if (ddp_status_ != CUBLAS_STATUS_SUCCESS)                                                                 \
      ::ddp::train::cuda::die(::ddp::train::cuda::cublas_error_text(ddp_status_, #call, __FILE__, __LINE__)); \
  } while (0)

// A kernel launch reports a bad configuration (or an earlier asynchronous
// fault) only through cudaGetLastError(): check it after every launch.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// Returning checks, for code that returns Result/Status (set-up, collectives).
#define CUDA_TRY(call)                                                                              \
  do {                                                                                              \
    const cudaError_t ddp_err_ = (call);                                                            \
    if (ddp_err_ != cudaSuccess)                                                                    \
      return ::ddp::fail(::ddp::train::cuda::cuda_error_text(ddp_err_, #call, __FILE__, __LINE__)); \
  } while (0)

#define CUBLAS_TRY(call)                                                                                 \
  do {                                                                                                   \
    const cublasStatus_t ddp_status_ = (call);                                                           \
    if (ddp_status_ != CUBLAS_STATUS_SUCCESS)                                                            \
      return ::ddp::fail(::ddp::train::cuda::cublas_error_text(ddp_status_, #call, __FILE__, __LINE__)); \
  } while (0)
