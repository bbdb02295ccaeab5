// Creating the NCCL communicators of a run without ever waiting past a
// deadline (nccl_init.cu); NcclCollectives (nccl_collectives.cu) uses them.
// Internal to trainer/cuda/.
#pragma once

#include <nccl.h>

#include <chrono>
#include <string>

#include "cuda/cuda_context.cuh"

namespace ddp::train::cuda {

struct NcclComms {
  ncclComm_t init = nullptr;  // non-blocking, created first; nobody reduces on it when ops != init
  ncclComm_t ops = nullptr;   // the collectives run here: a blocking split of init, or init itself
  bool blocking_ops = false;
};

Result<NcclComms> create_nccl_comms(const CudaContext& context, const GpuBackendConfig& config);

// Polls a non-blocking communicator until its pending operation is done;
// ncclSuccess, its error, or ncclInProgress if `deadline` passed first.
ncclResult_t wait_until_ready(ncclComm_t comm, std::chrono::steady_clock::time_point deadline);

std::string nccl_version_text();                 // "2.28.3"
std::string seconds_text(std::chrono::milliseconds ms);  // "12.5 s"

}  // namespace ddp::train::cuda
