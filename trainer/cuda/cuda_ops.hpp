// CudaOps alone, without a communicator: for ddp-gpu-selftest, which checks
// every Ops method against the CPU backend on one GPU. The trainer itself
// gets its CudaOps from make_gpu_backend() (gpu_backend.hpp). Plain C++: the
// selftest is compiled by the host compiler.
#pragma once

#include <memory>

#include "ddp/base/result.hpp"
#include "gpu_backend.hpp"
#include "model/ops.hpp"

namespace ddp::train {

// Ops on CUDA device `device` (after CUDA_VISIBLE_DEVICES), which becomes the
// current device of the calling thread; the linear layers' products in
// `matmul` precision (gpu_backend.hpp).
Result<std::unique_ptr<Ops>> make_cuda_ops(int device, MatmulPrecision matmul = MatmulPrecision::fp32);

}  // namespace ddp::train
