// The GPU backend's entry point. Defined in cuda/ when the build found the
// CUDA toolkit and NCCL, else by gpu_backend_none.cpp, which says so.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ddp/result.hpp"
#include "dist/collectives.hpp"
#include "dist/store.hpp"
#include "model/ops.hpp"

namespace ddp::train {

struct GpuBackend {
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Collectives> comm;
};

struct GpuBackendConfig {
  int local_rank = 0;  // selects the device (after CUDA_VISIBLE_DEVICES)
  int rank = 0;
  int world_size = 1;
  StoreClient* store = nullptr;  // rank 0 publishes the NCCL unique id here
  std::string nccl_id_key;       // store key of the unique id (run id + attempt inside)
  std::chrono::milliseconds init_timeout{60000};  // communicator init watchdog
  std::chrono::milliseconds op_timeout{300000};   // a collective stuck longer aborts the communicator
};

Result<GpuBackend> make_gpu_backend(const GpuBackendConfig& config);

// One line for --version: CUDA runtime and NCCL versions, or "not built".
std::string gpu_backend_description();

}  // namespace ddp::train
