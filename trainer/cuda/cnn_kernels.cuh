// The CNN's operations on one GPU (model/conv_shape.hpp), for CudaOps:
// convolution as im2col over the whole batch and one strided-batched cuBLAS
// product, col2im as a gather (each input element sums what it fed, so no
// atomics), 2x2 max pooling, dropout from the shared coin
// (model/kernels.hpp). Every call only enqueues on `stream` (Adadelta:
// optimizer_kernels.cuh).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "model/conv_shape.hpp"

namespace ddp::train::cuda {

std::size_t conv_scratch(const ConvShape& s, int max_batch);  // the batch's columns
void conv2d_forward(cudaStream_t stream, cublasHandle_t cublas, const float* x, const float* w, const float* b,
                    float* y, float* cols, int batch, const ConvShape& s);
void conv2d_backward(cudaStream_t stream, cublasHandle_t cublas, const float* x, const float* w, const float* dy,
                     float* dw, float* db, float* dx, float* cols, int batch, const ConvShape& s);
void relu_max_pool2_forward(cudaStream_t stream, const float* x, float* y, int* where, int planes, int h, int w);
void relu_max_pool2_backward(cudaStream_t stream, const float* dy, const int* where, float* dx, int planes, int h, int w);
void dropout_forward(cudaStream_t stream, const float* x, float* y, float* mask, int rows, int width, float p,
                     const DropoutKey& key);
void multiply(cudaStream_t stream, float* y, const float* a, const float* b, std::size_t n);

}  // namespace ddp::train::cuda
