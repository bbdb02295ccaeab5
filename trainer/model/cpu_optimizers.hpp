// The optimizers' element loops on the CPU: each element's update is
// model/kernels.hpp's (the CUDA kernels run the same one), over arrays.
#pragma once

#include <cstddef>

#include "model/kernels.hpp"

namespace ddp::train::cpu {

void sgd_momentum(float* w, float* velocity, const float* g, std::size_t n, float lr, float momentum);
void adam(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1, float beta2, float eps,
          const AdamBias& bias);
// g is scaled by clip; decay[i] says whether element i decays.
void adamw(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr, float beta1,
           float beta2, float eps, float weight_decay, float clip, const AdamBias& bias);
void adadelta(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho, float eps);

}  // namespace ddp::train::cpu
