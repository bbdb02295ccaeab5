// CudaOps alone, without a communicator: for ddp-gpu-selftest, which checks
// every Ops method against the CPU backend on one GPU. The trainer itself
// gets its CudaOps from make_gpu_backend() (gpu_backend.hpp). Plain C++: the
// selftest is compiled by the host compiler.
#pragma once

#include <memory>

#include "ddp/base/result.hpp"
#include "model/ops.hpp"

namespace ddp::train {

// Ops on CUDA device `device` (after CUDA_VISIBLE_DEVICES), which becomes the
// current device of the calling thread.
Result<std::unique_ptr<Ops>> make_cuda_ops(int device);

}  // namespace ddp::train
