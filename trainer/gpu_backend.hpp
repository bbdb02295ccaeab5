// The GPU backend's entry point. Defined in cuda/ when the build found the
// CUDA toolkit and NCCL, else by gpu_backend_none.cpp, which says so.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ddp/base/result.hpp"
#include "model/ops.hpp"
#include "process_group/collectives.hpp"
#include "process_group/store.hpp"

namespace ddp::train {

struct GpuBackend {
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Collectives> comm;
};

// How collectives are issued after the communicator exists. Both create it
// non-blocking (so start-up can give up at a deadline); they differ after:
//  - blocking: a blocking communicator split from it runs the collectives
//    (NCCL launches each call inline);
//  - nonblocking: the non-blocking communicator itself, where NCCL 2.28
//    launches every call from a thread it creates for that call and answers
//    ncclInProgress until it is done (src/group.cc), which we poll.
// The GPU kit (tests/gpu/run-gpu.sh) measures both.
enum class NcclOps { blocking, nonblocking };

// The linear layers' matrix products (cuda/gemm.cuh): fp32 (cuBLAS SGEMM,
// the CPU's arithmetic) or bf16 (operands rounded to bf16, tensor cores,
// fp32 sums and results; the master weights stay fp32). --precision.
enum class MatmulPrecision { fp32, bf16 };

struct GpuBackendConfig {
  int local_rank = 0;  // selects the device (after CUDA_VISIBLE_DEVICES)
  int local_world_size = 1;
  int rank = 0;
  int world_size = 1;
  StoreClient* store = nullptr;  // the unique id and the node's GPU claims travel here
  std::string store_prefix;      // prefix of those keys (run id + attempt inside)
  NcclOps ops = NcclOps::blocking;
  MatmulPrecision matmul = MatmulPrecision::fp32;
  std::chrono::milliseconds init_timeout{60000};  // communicator init watchdog
  std::chrono::milliseconds op_timeout{300000};   // a collective stuck longer aborts the communicator
};

Result<GpuBackend> make_gpu_backend(const GpuBackendConfig& config);

// One line for --version: CUDA runtime and NCCL versions, or "not built".
std::string gpu_backend_description();

}  // namespace ddp::train
