// The CNN's layers on the CPU, forward and backward spelled out (llm.c
// style): convolution as im2col + OpenBLAS sgemm, one image at a time
// through a scratch of one image's columns; 2x2 max pooling; dropout. No
// allocation inside a step: callers own every buffer.
#pragma once

#include <cstddef>

#include "model/conv_shape.hpp"

namespace ddp::train::cpu {

// Floats of scratch conv2d_forward/backward need: one image's columns.
std::size_t conv_scratch(const ConvShape& s);
// y = conv(x, w) + b over `batch` images.
void conv2d_forward(const float* x, const float* w, const float* b, float* y, float* cols, int batch,
                    const ConvShape& s);
// dw += dY (x)^T per image, db += dY's sums per channel, dx = the transposed
// convolution of dY (skipped when dx is null: the first layer needs none).
void conv2d_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, float* cols,
                     int batch, const ConvShape& s);

// ReLU, then 2x2 max pooling, stride 2, over `planes` planes of h x w
// (both even), in one pass: the maximum of ReLU's outputs is ReLU of the
// maximum. where[i] = the index in its plane of output i's maximum (the
// first in row-major order on ties, as PyTorch), or -1 when it is not above
// zero (ReLU passes no gradient there; PyTorch's relu-then-pool gives the
// same zeros).
void relu_max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w);
// dx = dy routed back to each positive maximum, zero elsewhere.
void relu_max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w);

// y = x * mask over rows x width, mask[i] = 0 or 1 / (1 - p) (kernels.hpp).
void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p, const DropoutKey& key);

}  // namespace ddp::train::cpu
