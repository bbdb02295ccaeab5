// The optimizers' updates on one GPU, for CudaOps: elementwise over flat
// parameter buffers, each element by model/kernels.hpp's step function, the
// one the CPU backend runs. Adam and AdamW count their steps in device
// memory (*step, incremented by a one-thread kernel that also sets this
// step's bias corrections in `bias`), so a step captured into a CUDA graph
// replays with the right corrections. Every call only enqueues on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "model/kernels.hpp"

namespace ddp::train::cuda {

void sgd_momentum(cudaStream_t stream, float* w, float* velocity, const float* g, std::size_t n, float lr,
                  float momentum);
void adam(cudaStream_t stream, float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1,
          float beta2, float eps, int* step, AdamBias* bias);
// AdamW on g x clip, decaying where decay[i] is 1 (the GPT's).
void adamw(cudaStream_t stream, float* w, float* m, float* v, const float* g, const float* decay, std::size_t n,
           float lr, float beta1, float beta2, float eps, float weight_decay, float clip, int* step, AdamBias* bias);
void adadelta(cudaStream_t stream, float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
              float eps);

}  // namespace ddp::train::cuda
