// The CPU layers of ddp-train, forward and backward spelled out (llm.c style):
// row-major float32, batch-major activations, no allocation inside a step
// (callers own every buffer). Matrix products go to OpenBLAS sgemm.
#pragma once

#include <cstddef>

namespace ddp::train::cpu {

// y[B x out] = x[B x in] * W^T + b, with W[out x in] (PyTorch's layout); no
// bias when b (and db below) is null (the GPT's tied head).
void linear_forward(const float* x, const float* w, const float* b, float* y, int batch, int in, int out);
// Given dy[B x out]: dw[out x in] += dy^T x, db[out] += column sums of dy,
// dx[B x in] = dy W (skipped when dx is null: the first layer needs none).
void linear_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, int batch,
                     int in, int out);

void relu_forward(const float* x, float* y, std::size_t n);
void relu_backward(const float* y, const float* dy, float* dx, std::size_t n);

// Mean softmax cross-entropy over the batch; writes dlogits (already / batch).
float cross_entropy(const float* logits, const int* labels, float* dlogits, int batch, int classes);
// Mean squared error over all elements (PyTorch's MSELoss); writes dpred.
float mse(const float* pred, const float* target, float* dpred, std::size_t n);

}  // namespace ddp::train::cpu
