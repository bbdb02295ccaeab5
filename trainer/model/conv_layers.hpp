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

// 2x2 max pooling, stride 2, over `planes` planes of h x w (both even);
// where[i] = the index in its plane of output i's maximum (the first in
// row-major order on ties, as PyTorch).
void max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w);
// dx = dy routed back to each maximum, zero elsewhere.
void max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w);

// y = x * mask over rows x width, mask[i] = 0 or 1 / (1 - p) (kernels.hpp).
void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p, const DropoutKey& key);

}  // namespace ddp::train::cpu
