#include "model/cpu_optimizers.hpp"

#include "model/cpu_clones.hpp"

namespace ddp::train::cpu {

DDP_CPU_CLONES
void sgd_momentum(float* w, float* velocity, const float* g, std::size_t n, float lr, float momentum) {
  for (std::size_t i = 0; i < n; ++i) sgd_momentum_step(w[i], velocity[i], g[i], lr, momentum);
}

DDP_CPU_CLONES
void adam(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1, float beta2, float eps,
          const AdamBias& bias) {
  for (std::size_t i = 0; i < n; ++i) adam_step(w[i], m[i], v[i], g[i], lr, beta1, beta2, eps, bias);
}

DDP_CPU_CLONES
void adamw(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr, float beta1,
           float beta2, float eps, float weight_decay, float clip, const AdamBias& bias) {
  for (std::size_t i = 0; i < n; ++i)
    adamw_step(w[i], m[i], v[i], g[i] * clip, lr, beta1, beta2, eps, decay[i] * weight_decay, bias);
}

DDP_CPU_CLONES
void adadelta(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho, float eps) {
  for (std::size_t i = 0; i < n; ++i) adadelta_step(w[i], sq[i], acc[i], g[i], lr, rho, eps);
}

}  // namespace ddp::train::cpu
