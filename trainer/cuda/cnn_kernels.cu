// Row-major NCHW buffers seen by column-major cuBLAS (cuda_ops.cu explains the
// mapping): one image's columns, row-major [patch x spatial], are the
// column-major [spatial x patch] matrix with leading dimension `spatial`.
#include <algorithm>

#include "cuda/cnn_kernels.cuh"
#include "cuda/cuda_context.cuh"
#include "cuda/grid.cuh"
#include "model/kernels.hpp"

namespace ddp::train::cuda {
namespace {

// cols[b][(c, ki, kj)][(oh, ow)] = x[b][c][oh + ki][ow + kj]
__global__ void im2col_kernel(const float* x, float* cols, int batch, ConvShape s) {
  const int oh = s.out_h(), ow = s.out_w(), spatial = oh * ow, patch = int(s.patch());
  const std::size_t n = std::size_t(batch) * patch * spatial;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const int q = int(i % spatial), r = int((i / spatial) % patch);
    const std::size_t b = i / (std::size_t(spatial) * patch);
    const int c = r / (s.k * s.k), ki = (r / s.k) % s.k, kj = r % s.k;
    cols[i] = x[b * s.in_size() + (std::size_t(c) * s.in_h + q / ow + ki) * s.in_w + q % ow + kj];
  }
}

// dx[b][c][h][w] = the sum of every column entry that came from it.
__global__ void col2im_kernel(const float* cols, float* dx, int batch, ConvShape s) {
  const int oh = s.out_h(), ow = s.out_w(), spatial = oh * ow, patch = int(s.patch());
  const std::size_t n = std::size_t(batch) * s.in_size();
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const int w = int(i % s.in_w), h = int((i / s.in_w) % s.in_h), c = int((i / (std::size_t(s.in_w) * s.in_h)) % s.in_c);
    const std::size_t b = i / s.in_size();
    float sum = 0.0f;
    for (int ki = 0; ki < s.k; ++ki)
      for (int kj = 0; kj < s.k; ++kj) {
        const int r = h - ki, q = w - kj;
        if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
        sum += cols[(b * patch + (std::size_t(c) * s.k + ki) * s.k + kj) * spatial + std::size_t(r) * ow + q];
      }
    dx[i] = sum;
  }
}

__global__ void conv_bias_kernel(const float* bias, float* y, std::size_t n, int spatial, int channels) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) y[i] = bias[(i / spatial) % channels];
}

// One block per channel: db[o] += the sum of dY over the batch and the plane.
__global__ void conv_bias_grad_kernel(const float* dy, float* db, int batch, int spatial, int channels) {
  __shared__ float partial[kThreads];
  const int o = blockIdx.x;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < batch * spatial; i += blockDim.x)
    sum += dy[(std::size_t(i / spatial) * channels + o) * spatial + i % spatial];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[o] += partial[0];
}

__global__ void relu_max_pool2_kernel(const float* x, float* y, int* where, std::size_t n, int h, int w) {
  const int ph = h / 2, pw = w / 2;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const std::size_t plane = i / (std::size_t(ph) * pw);
    const int r = int(i / pw % ph), q = int(i % pw);
    const float* in = x + plane * h * w;
    int best = 2 * r * w + 2 * q;
    const int next[3] = {best + 1, best + w, best + w + 1};  // row-major: the first maximum wins, as on the CPU
    for (int at : next)
      if (in[at] > in[best]) best = at;
    y[i] = in[best] > 0.0f ? in[best] : 0.0f;  // ReLU's, fused (model/conv_layers.hpp)
    where[i] = in[best] > 0.0f ? best : -1;
  }
}

__global__ void relu_max_pool2_back_kernel(const float* dy, const int* where, float* dx, std::size_t n, int h, int w) {
  const std::size_t per_plane = std::size_t(h / 2) * (w / 2);
  for (std::size_t i = first_index(); i < n; i += index_stride())
    if (where[i] >= 0) dx[(i / per_plane) * h * w + std::size_t(where[i])] = dy[i];
}

__global__ void dropout_kernel(const float* x, float* y, float* mask, int rows, int width, float p, DropoutKey key) {
  const std::size_t n = std::size_t(rows) * width;
  const int round = *key.round;
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    mask[i] = dropout_scale(key.seed, key.layer, round, key.sample[i / width], int(i % width), p);
    y[i] = x[i] * mask[i];
  }
}

__global__ void multiply_kernel(float* y, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) y[i] = a[i] * b[i];
}

}  // namespace

std::size_t conv_scratch(const ConvShape& s, int max_batch) {
  return s.patch() * std::size_t(s.out_h()) * s.out_w() * std::size_t(max_batch);
}

void conv2d_forward(cudaStream_t stream, cublasHandle_t cublas, const float* x, const float* w, const float* b,
                    float* y, float* cols, int batch, const ConvShape& s) {
  if (batch <= 0) return;
  const int spatial = s.out_h() * s.out_w(), patch = int(s.patch());
  const std::size_t n = std::size_t(batch) * s.out_size();
  conv_bias_kernel<<<blocks_for(n), kThreads, 0, stream>>>(b, y, n, spatial, s.out_c);
  CUDA_CHECK_LAUNCH();
  const std::size_t col_n = std::size_t(batch) * patch * spatial;
  im2col_kernel<<<blocks_for(col_n), kThreads, 0, stream>>>(x, cols, batch, s);
  CUDA_CHECK_LAUNCH();
  // y_b [out_c x spatial] += W [out_c x patch] cols_b [patch x spatial]; column-major:
  // y_b^T [spatial x out_c] += cols_b^T [spatial x patch] W^T [patch x out_c], W shared (stride 0).
  const float one = 1.0f;
  CUBLAS_CHECK(cublasSgemmStridedBatched(cublas, CUBLAS_OP_N, CUBLAS_OP_N, spatial, s.out_c, patch, &one, cols,
                                         spatial, (long long)patch * spatial, w, patch, 0, &one, y, spatial,
                                         (long long)s.out_size(), batch));
}

void conv2d_backward(cudaStream_t stream, cublasHandle_t cublas, const float* x, const float* w, const float* dy,
                     float* dw, float* db, float* dx, float* cols, int batch, const ConvShape& s) {
  if (batch <= 0) return;
  const int spatial = s.out_h() * s.out_w(), patch = int(s.patch());
  conv_bias_grad_kernel<<<s.out_c, kThreads, 0, stream>>>(dy, db, batch, spatial, s.out_c);
  CUDA_CHECK_LAUNCH();
  const std::size_t col_n = std::size_t(batch) * patch * spatial;
  im2col_kernel<<<blocks_for(col_n), kThreads, 0, stream>>>(x, cols, batch, s);
  CUDA_CHECK_LAUNCH();
  const float one = 1.0f, zero = 0.0f;
  // dW [out_c x patch] += dY_b cols_b^T per image; column-major: dW^T [patch x out_c] += cols_b dY_b^T.
  for (int i = 0; i < batch; ++i)
    CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, patch, s.out_c, spatial, &one,
                             cols + std::size_t(i) * patch * spatial, spatial, dy + std::size_t(i) * s.out_size(),
                             spatial, &one, dw, patch));
  if (!dx) return;
  // dcols_b [patch x spatial] = W^T dY_b; column-major: dcols_b^T [spatial x patch] = dY_b^T W.
  CUBLAS_CHECK(cublasSgemmStridedBatched(cublas, CUBLAS_OP_N, CUBLAS_OP_T, spatial, patch, s.out_c, &one, dy, spatial,
                                         (long long)s.out_size(), w, patch, 0, &zero, cols, spatial,
                                         (long long)patch * spatial, batch));
  const std::size_t n = std::size_t(batch) * s.in_size();
  col2im_kernel<<<blocks_for(n), kThreads, 0, stream>>>(cols, dx, batch, s);
  CUDA_CHECK_LAUNCH();
}

void relu_max_pool2_forward(cudaStream_t stream, const float* x, float* y, int* where, int planes, int h, int w) {
  const std::size_t n = std::size_t(planes) * (h / 2) * (w / 2);
  if (n == 0) return;
  relu_max_pool2_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, where, n, h, w);
  CUDA_CHECK_LAUNCH();
}

void relu_max_pool2_backward(cudaStream_t stream, const float* dy, const int* where, float* dx, int planes, int h, int w) {
  const std::size_t n = std::size_t(planes) * (h / 2) * (w / 2);
  if (n == 0) return;
  CUDA_CHECK(cudaMemsetAsync(dx, 0, sizeof(float) * std::size_t(planes) * h * w, stream));
  relu_max_pool2_back_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, where, dx, n, h, w);
  CUDA_CHECK_LAUNCH();
}

void dropout_forward(cudaStream_t stream, const float* x, float* y, float* mask, int rows, int width, float p,
                     const DropoutKey& key) {
  const std::size_t n = std::size_t(rows) * width;
  if (n == 0) return;
  dropout_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, mask, rows, width, p, key);
  CUDA_CHECK_LAUNCH();
}

void multiply(cudaStream_t stream, float* y, const float* a, const float* b, std::size_t n) {
  if (n == 0) return;
  multiply_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, a, b, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ddp::train::cuda
