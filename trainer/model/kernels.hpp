// Elementwise math written once for the host and the device: the CPU backend
// calls these in loops, the CUDA kernels (trainer/cuda/) call them per thread,
// so the CPU unit tests exercise the arithmetic the GPU runs.
#pragma once

#include <cmath>
#include <cstdint>

#include "model/host_device.hpp"

namespace ddp::train {

DDP_HD inline float relu(float x) { return x > 0.0f ? x : 0.0f; }
// Gradient through ReLU, given the layer's output y = relu(x).
DDP_HD inline float relu_backward(float y, float dy) { return y > 0.0f ? dy : 0.0f; }

// SGD with momentum, PyTorch's form: v = mu * v + g; w -= lr * v.
DDP_HD inline void sgd_momentum_step(float& w, float& v, float g, float lr, float mu) {
  v = mu * v + g;
  w -= lr * v;
}

// Adam's bias corrections for step t (1-based): 1 / (1 - beta^t), computed
// once per step, not twice per element (powf would dominate a step): here
// for the CPU; the CUDA backend computes them on the device (adam_tick_kernel).
struct AdamBias {
  float c1;
  float c2;
};
inline AdamBias adam_bias(float beta1, float beta2, int t) {
  return {1.0f / (1.0f - std::pow(beta1, float(t))), 1.0f / (1.0f - std::pow(beta2, float(t)))};
}

// Adam (PyTorch's, no weight decay).
DDP_HD inline void adam_step(float& w, float& m, float& v, float g, float lr, float beta1, float beta2, float eps,
                             AdamBias bias) {
  m = beta1 * m + (1.0f - beta1) * g;
  v = beta2 * v + (1.0f - beta2) * g * g;
  w -= lr * (m * bias.c1) / (sqrtf(v * bias.c2) + eps);
}

// AdamW (PyTorch's): the decoupled weight decay first (w *= 1 - lr * wd; wd
// 0 for biases and LayerNorms), then Adam's step.
DDP_HD inline void adamw_step(float& w, float& m, float& v, float g, float lr, float beta1, float beta2, float eps,
                              float wd, AdamBias bias) {
  w *= 1.0f - lr * wd;
  adam_step(w, m, v, g, lr, beta1, beta2, eps, bias);
}

// Adadelta (PyTorch's, no weight decay): the running mean of g^2 (sq) and of
// the squared updates (acc); the update is g scaled by their RMS ratio.
DDP_HD inline void adadelta_step(float& w, float& sq, float& acc, float g, float lr, float rho, float eps) {
  sq = rho * sq + (1.0f - rho) * g * g;
  const float delta = sqrtf(acc + eps) / sqrtf(sq + eps) * g;
  acc = rho * acc + (1.0f - rho) * delta * delta;
  w -= lr * delta;
}

// Dropout's coin for unit `unit` of sample `sample` in layer `layer` at step
// `round`: a hash (splitmix64's finaliser) of those numbers and the run's
// seed, not a generator's state. The same sample gets the same mask on any
// rank, in any micro-batch, on the CPU or the GPU, and after a resume (the
// round is the global step): 1 rank and N ranks stay equal with dropout on.
// Returns the scale the unit's value is multiplied by: 0, or 1 / (1 - p).
DDP_HD inline float dropout_scale(std::uint32_t seed, int layer, int round, int sample, int unit, float p) {
  std::uint64_t z = std::uint64_t(seed) * 0x9E3779B97F4A7C15ULL + std::uint64_t(std::uint32_t(round)) * 0xD1B54A32D192ED03ULL +
                    std::uint64_t(std::uint32_t(sample)) * 0xAEF17502108EF2D9ULL +
                    std::uint64_t(std::uint32_t(layer)) * 0x94D049BB133111EBULL + std::uint64_t(std::uint32_t(unit));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const float u = float(z >> 40) * (1.0f / 16777216.0f);  // 24 bits: [0, 1)
  return u < p ? 0.0f : 1.0f / (1.0f - p);
}

// Softmax cross-entropy of one row of logits z[classes] whose true class is
// `label`, as part of a mean over `batch` rows: returns the row's loss
// -log softmax(z)[label] and writes d[c] = (softmax(z)[c] - [c == label]) / batch,
// the gradient of the batch mean. The row max is subtracted before exp() so it
// cannot overflow; sums run in double. The CUDA kernel runs this per row.
DDP_HD inline double cross_entropy_row(const float* z, int label, int classes, int batch, float* d) {
  float zmax = z[0];
  for (int c = 1; c < classes; ++c) zmax = z[c] > zmax ? z[c] : zmax;
  double sum = 0;
  for (int c = 0; c < classes; ++c) sum += exp(double(z[c] - zmax));
  const double log_sum = log(sum) + zmax;
  double z_label = 0;  // read inside the loop: a bad label never indexes past the row
  for (int c = 0; c < classes; ++c) {
    if (c == label) z_label = z[c];
    d[c] = float((exp(double(z[c]) - log_sum) - (c == label ? 1.0 : 0.0)) / batch);
  }
  return log_sum - z_label;
}

// Index of the first largest of z[0..n) (std::max_element's choice on ties).
DDP_HD inline int argmax_row(const float* z, int n) {
  int best = 0;
  for (int c = 1; c < n; ++c)
    if (z[c] > z[best]) best = c;
  return best;
}

}  // namespace ddp::train
