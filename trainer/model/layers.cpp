#include "model/layers.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "model/cpu_clones.hpp"
#include "model/kernels.hpp"

namespace ddp::train::cpu {

void linear_forward(const float* x, const float* w, const float* b, float* y, int batch, int in, int out) {
  if (b)
    for (int r = 0; r < batch; ++r) std::copy(b, b + out, y + std::size_t(r) * out);  // y = b, then y += x W^T
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out, in, 1.0f, x, in, w, in, b ? 1.0f : 0.0f, y, out);
}

void linear_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, int batch,
                     int in, int out) {
  // dW += dY^T X  ([out x B] [B x in]); gradients accumulate (micro-batches).
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, batch, 1.0f, dy, out, x, in, 1.0f, dw, in);
  if (db)
    for (int r = 0; r < batch; ++r)
      for (int o = 0; o < out; ++o) db[o] += dy[std::size_t(r) * out + o];
  if (dx)  // dX = dY W  ([B x out] [out x in])
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
}

DDP_CPU_CLONES
void relu_forward(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = relu(x[i]);
}

DDP_CPU_CLONES
void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dx[i] = ddp::train::relu_backward(y[i], dy[i]);
}

float cross_entropy(const float* logits, const int* labels, float* dlogits, int batch, int classes) {
  // The per-row math is shared with the CUDA kernel (model/kernels.hpp).
  double loss = 0;
  for (int r = 0; r < batch; ++r)
    loss += cross_entropy_row(logits + std::size_t(r) * classes, labels[r], classes, batch,
                              dlogits + std::size_t(r) * classes);
  return float(loss / batch);
}

float mse(const float* pred, const float* target, float* dpred, std::size_t n) {
  double loss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double diff = double(pred[i]) - target[i];
    loss += diff * diff;
    dpred[i] = float(2.0 * diff / double(n));
  }
  return float(loss / double(n));
}

}  // namespace ddp::train::cpu
