#include <algorithm>

#include "cuda/cuda_context.cuh"
#include "cuda/grid.cuh"
#include "cuda/optimizer_kernels.cuh"

namespace ddp::train::cuda {
namespace {

__global__ void sgd_momentum_kernel(float* w, float* velocity, const float* g, std::size_t n, float lr,
                                    float momentum) {
  for (std::size_t i = first_index(); i < n; i += index_stride())
    sgd_momentum_step(w[i], velocity[i], g[i], lr, momentum);
}

// One thread: the step count lives on the device, so a captured step replays
// with the right bias corrections. Computed once per step, as on the CPU.
__global__ void adam_tick_kernel(int* step, float beta1, float beta2, AdamBias* bias) {
  const int t = ++*step;
  bias->c1 = 1.0f / (1.0f - powf(beta1, float(t)));
  bias->c2 = 1.0f / (1.0f - powf(beta2, float(t)));
}

__global__ void adam_kernel(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1,
                            float beta2, float eps, const AdamBias* bias_of_step) {
  const AdamBias bias = *bias_of_step;
  for (std::size_t i = first_index(); i < n; i += index_stride())
    adam_step(w[i], m[i], v[i], g[i], lr, beta1, beta2, eps, bias);
}

__global__ void adamw_kernel(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr,
                             float beta1, float beta2, float eps, float weight_decay, float clip,
                             const AdamBias* bias_of_step) {
  const AdamBias bias = *bias_of_step;
  for (std::size_t i = first_index(); i < n; i += index_stride())
    adamw_step(w[i], m[i], v[i], g[i] * clip, lr, beta1, beta2, eps, decay[i] * weight_decay, bias);
}

__global__ void adadelta_kernel(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
                                float eps) {
  for (std::size_t i = first_index(); i < n; i += index_stride())
    adadelta_step(w[i], sq[i], acc[i], g[i], lr, rho, eps);
}

}  // namespace

void sgd_momentum(cudaStream_t stream, float* w, float* velocity, const float* g, std::size_t n, float lr,
                  float momentum) {
  if (n == 0) return;
  sgd_momentum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, velocity, g, n, lr, momentum);
  CUDA_CHECK_LAUNCH();
}

void adam(cudaStream_t stream, float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1,
          float beta2, float eps, int* step, AdamBias* bias) {
  adam_tick_kernel<<<1, 1, 0, stream>>>(step, beta1, beta2, bias);
  CUDA_CHECK_LAUNCH();
  if (n == 0) return;
  adam_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, m, v, g, n, lr, beta1, beta2, eps, bias);
  CUDA_CHECK_LAUNCH();
}

void adamw(cudaStream_t stream, float* w, float* m, float* v, const float* g, const float* decay, std::size_t n,
           float lr, float beta1, float beta2, float eps, float weight_decay, float clip, int* step, AdamBias* bias) {
  adam_tick_kernel<<<1, 1, 0, stream>>>(step, beta1, beta2, bias);
  CUDA_CHECK_LAUNCH();
  if (n == 0) return;
  adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, m, v, g, decay, n, lr, beta1, beta2, eps, weight_decay, clip,
                                                       bias);
  CUDA_CHECK_LAUNCH();
}

void adadelta(cudaStream_t stream, float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
              float eps) {
  if (n == 0) return;
  adadelta_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, sq, acc, g, n, lr, rho, eps);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ddp::train::cuda
