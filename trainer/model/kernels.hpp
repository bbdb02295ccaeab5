// Elementwise math written once for the host and the device: the CPU backend
// calls these in loops, the CUDA kernels (trainer/cuda/) call them per thread,
// so the CPU unit tests exercise the arithmetic the GPU runs.
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define DDP_HD __host__ __device__
#else
#define DDP_HD
#endif

namespace ddp::train {

DDP_HD inline float relu(float x) { return x > 0.0f ? x : 0.0f; }
// Gradient through ReLU, given the layer's output y = relu(x).
DDP_HD inline float relu_backward(float y, float dy) { return y > 0.0f ? dy : 0.0f; }

// SGD with momentum, PyTorch's form: v = mu * v + g; w -= lr * v.
DDP_HD inline void sgd_momentum_step(float& w, float& v, float g, float lr, float mu) {
  v = mu * v + g;
  w -= lr * v;
}

// Adam (PyTorch's, no weight decay): t is the 1-based step.
DDP_HD inline void adam_step(float& w, float& m, float& v, float g, float lr, float beta1, float beta2, float eps,
                             int t) {
  m = beta1 * m + (1.0f - beta1) * g;
  v = beta2 * v + (1.0f - beta2) * g * g;
  const float m_hat = m / (1.0f - powf(beta1, float(t)));
  const float v_hat = v / (1.0f - powf(beta2, float(t)));
  w -= lr * m_hat / (sqrtf(v_hat) + eps);
}

}  // namespace ddp::train
