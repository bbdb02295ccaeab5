// Row-major as model/gpt_layers.cpp: activations [B, T, C], N = B x T rows;
// qkv [B, T, 3C] (query, key, value side by side); the attention's per-row
// values [B, NH, T]. A warp works on a row where the row is reduced (a
// LayerNorm row, a query's scores); its lanes split the channels.
#include <algorithm>
#include <cmath>

#include "cuda/cuda_context.cuh"
#include "cuda/gpt_kernels.cuh"

namespace ddp::train::cuda::gpt {
namespace {

constexpr int kThreads = 256, kWarp = 32;
constexpr int kMaxPerLane = 4;  // a head of at most 128 channels: 4 a lane
constexpr float kLayerNormEps = 1e-5f, kGeluCube = 0.044715f;

unsigned blocks_for(std::size_t n) {
  return unsigned(std::min<std::size_t>((n + kThreads - 1) / kThreads, std::size_t(1) << 16));
}
unsigned warp_blocks_for(std::size_t rows) { return unsigned((rows * kWarp + kThreads - 1) / kThreads); }
__device__ std::size_t first_index() { return std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ std::size_t index_stride() { return std::size_t(gridDim.x) * blockDim.x; }
__device__ std::size_t warp_row() { return first_index() / kWarp; }
__device__ int lane() { return int(threadIdx.x % kWarp); }

__device__ float warp_sum(float x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// A block's sum or maximum of one value a thread (kThreads threads).
template <bool kMax>
__device__ float block_reduce(float x, float* shared) {
  shared[threadIdx.x] = x;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      shared[threadIdx.x] = kMax ? fmaxf(shared[threadIdx.x], shared[threadIdx.x + half])
                                 : shared[threadIdx.x] + shared[threadIdx.x + half];
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();  // `shared` may be used again at once
  return result;
}

// ---- embeddings -------------------------------------------------------------

__global__ void embed_forward_kernel(float* out, const int* tokens, const float* wte, const float* wpe, int T, int C,
                                     std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const std::size_t row = i / C;
    const int c = int(i % C), t = int(row % T);
    out[i] = wte[std::size_t(tokens[row]) * C + c] + wpe[std::size_t(t) * C + c];
  }
}

// One thread per channel walks every row in order: rows with the same token
// add into the same row of dwte without atomics.
__global__ void embed_backward_wte_kernel(float* dwte, const float* dout, const int* tokens, int N, int C) {
  const int c = int(first_index());
  if (c >= C) return;
  for (int n = 0; n < N; ++n) dwte[std::size_t(tokens[n]) * C + c] += dout[std::size_t(n) * C + c];
}

__global__ void embed_backward_wpe_kernel(float* dwpe, const float* dout, int B, int T, int C) {
  const std::size_t i = first_index();  // (t, c)
  if (i >= std::size_t(T) * C) return;
  float sum = 0.0f;
  for (int b = 0; b < B; ++b) sum += dout[std::size_t(b) * T * C + i];
  dwpe[i] += sum;
}

// ---- LayerNorm -------------------------------------------------------------------

__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* x, const float* w,
                                         const float* b, int N, int C) {
  const std::size_t n = warp_row();
  if (n >= std::size_t(N)) return;
  const float* row = x + n * C;
  float sum = 0.0f;
  for (int c = lane(); c < C; c += kWarp) sum += row[c];
  const float m = warp_sum(sum) / float(C);
  float squares = 0.0f;
  for (int c = lane(); c < C; c += kWarp) squares += (row[c] - m) * (row[c] - m);
  const float r = rsqrtf(warp_sum(squares) / float(C) + kLayerNormEps);
  for (int c = lane(); c < C; c += kWarp) out[n * C + c] = (row[c] - m) * r * w[c] + b[c];
  if (lane() == 0) mean[n] = m, rstd[n] = r;
}

__global__ void layernorm_backward_dx_kernel(float* dx, const float* dout, const float* x, const float* w,
                                             const float* mean, const float* rstd, int N, int C) {
  const std::size_t n = warp_row();
  if (n >= std::size_t(N)) return;
  const float* row = x + n * C;
  const float* d = dout + n * C;
  float dnorm = 0.0f, dnorm_xhat = 0.0f;
  for (int c = lane(); c < C; c += kWarp) {
    const float xhat = (row[c] - mean[n]) * rstd[n];
    dnorm += w[c] * d[c];
    dnorm_xhat += w[c] * d[c] * xhat;
  }
  dnorm = warp_sum(dnorm) / float(C);
  dnorm_xhat = warp_sum(dnorm_xhat) / float(C);
  for (int c = lane(); c < C; c += kWarp) {
    const float xhat = (row[c] - mean[n]) * rstd[n];
    dx[n * C + c] += rstd[n] * (w[c] * d[c] - dnorm - xhat * dnorm_xhat);
  }
}

// One thread per channel sums its column over the rows.
__global__ void layernorm_backward_dw_kernel(float* dw, float* db, const float* dout, const float* x, const float* mean,
                                             const float* rstd, int N, int C) {
  const int c = int(first_index());
  if (c >= C) return;
  float sum_w = 0.0f, sum_b = 0.0f;
  for (int n = 0; n < N; ++n) {
    const float d = dout[std::size_t(n) * C + c];
    sum_w += d * (x[std::size_t(n) * C + c] - mean[n]) * rstd[n];
    sum_b += d;
  }
  dw[c] += sum_w;
  db[c] += sum_b;
}

}  // namespace

void embed_forward(cudaStream_t stream, float* out, const int* tokens, const float* wte, const float* wpe, int B, int T,
                   int C) {
  const std::size_t n = std::size_t(B) * T * C;
  embed_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, tokens, wte, wpe, T, C, n);
  CUDA_CHECK_LAUNCH();
}

void embed_backward(cudaStream_t stream, float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T,
                    int C) {
  embed_backward_wte_kernel<<<blocks_for(std::size_t(C)), kThreads, 0, stream>>>(dwte, dout, tokens, B * T, C);
  CUDA_CHECK_LAUNCH();
  embed_backward_wpe_kernel<<<blocks_for(std::size_t(T) * C), kThreads, 0, stream>>>(dwpe, dout, B, T, C);
  CUDA_CHECK_LAUNCH();
}

void layernorm_forward(cudaStream_t stream, float* out, float* mean, float* rstd, const float* x, const float* w,
                       const float* b, int N, int C) {
  layernorm_forward_kernel<<<warp_blocks_for(std::size_t(N)), kThreads, 0, stream>>>(out, mean, rstd, x, w, b, N, C);
  CUDA_CHECK_LAUNCH();
}

void layernorm_backward(cudaStream_t stream, float* dx, float* dw, float* db, const float* dout, const float* x,
                        const float* w, const float* mean, const float* rstd, int N, int C) {
  layernorm_backward_dx_kernel<<<warp_blocks_for(std::size_t(N)), kThreads, 0, stream>>>(dx, dout, x, w, mean, rstd, N,
                                                                                         C);
  CUDA_CHECK_LAUNCH();
  layernorm_backward_dw_kernel<<<blocks_for(std::size_t(C)), kThreads, 0, stream>>>(dw, db, dout, x, mean, rstd, N, C);
  CUDA_CHECK_LAUNCH();
}

// ---- attention ----------------------------------------------------------------------

namespace {

// Where a warp's attention row lives: row = (b x NH + h) x T + t.
struct HeadRow {
  std::size_t b;
  int h, t;
  __device__ HeadRow(std::size_t row, int T, int NH)
      : b(row / (std::size_t(T) * NH)), h(int(row / T % NH)), t(int(row % T)) {}
};

// This lane's channels of a head's vector (d = lane, lane + 32, ...).
__device__ void load_head(float* to, const float* from, int hs) {
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane() + k * kWarp;
    to[k] = d < hs ? from[d] : 0.0f;
  }
}
__device__ float head_dot(const float* mine, const float* other, int hs) {
  float partial = 0.0f;
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane() + k * kWarp;
    if (d < hs) partial += mine[k] * other[d];
  }
  return warp_sum(partial);
}

// One warp a query row: the scores over keys 0..t one by one, with an online
// softmax (the running maximum and sum, earlier terms rescaled when the
// maximum grows), so no row of T probabilities is kept; the row's
// log-sum-exp is, for backward.
__global__ void attention_forward_kernel(float* out, float* lse, const float* qkv, int B, int T, int C, int NH) {
  const std::size_t row = warp_row();
  if (row >= std::size_t(B) * NH * T) return;
  const HeadRow r(row, T, NH);
  const int hs = C / NH;
  const float scale = 1.0f / sqrtf(float(hs));
  const float* seq = qkv + r.b * T * 3 * C;
  float q[kMaxPerLane], o[kMaxPerLane] = {};
  load_head(q, seq + std::size_t(r.t) * 3 * C + r.h * hs, hs);
  float top = -INFINITY, sum = 0.0f;
  for (int u = 0; u <= r.t; ++u) {
    const float s = head_dot(q, seq + std::size_t(u) * 3 * C + C + r.h * hs, hs) * scale;
    const float next_top = fmaxf(top, s);
    const float rescale = expf(top - next_top), p = expf(s - next_top);
    sum = sum * rescale + p;
    const float* v = seq + std::size_t(u) * 3 * C + 2 * C + r.h * hs;
    for (int k = 0; k < kMaxPerLane; ++k) {
      const int d = lane() + k * kWarp;
      o[k] = o[k] * rescale + (d < hs ? p * v[d] : 0.0f);
    }
    top = next_top;
  }
  float* dst = out + (r.b * T + r.t) * C + r.h * hs;
  for (int k = 0; k < kMaxPerLane; ++k)
    if (lane() + k * kWarp < hs) dst[lane() + k * kWarp] = o[k] / sum;
  if (lane() == 0) lse[row] = top + logf(sum);
}

// Each query row's dout . out: the softmax's backward subtracts it.
__global__ void attention_dot_kernel(float* dot, const float* dout, const float* out, int B, int T, int C, int NH) {
  const std::size_t row = warp_row();
  if (row >= std::size_t(B) * NH * T) return;
  const HeadRow r(row, T, NH);
  const int hs = C / NH;
  const std::size_t at = (r.b * T + r.t) * C + r.h * hs;
  float mine[kMaxPerLane];
  load_head(mine, dout + at, hs);
  const float d = head_dot(mine, out + at, hs);
  if (lane() == 0) dot[row] = d;
}

// dq of one query row: over keys u <= t, with p recomputed from the log-sum-exp.
__global__ void attention_dq_kernel(float* dqkv, const float* dout, const float* qkv, const float* lse,
                                    const float* dot, int B, int T, int C, int NH) {
  const std::size_t row = warp_row();
  if (row >= std::size_t(B) * NH * T) return;
  const HeadRow r(row, T, NH);
  const int hs = C / NH;
  const float scale = 1.0f / sqrtf(float(hs));
  const float* seq = qkv + r.b * T * 3 * C;
  float q[kMaxPerLane], d_out[kMaxPerLane], dq[kMaxPerLane] = {};
  load_head(q, seq + std::size_t(r.t) * 3 * C + r.h * hs, hs);
  load_head(d_out, dout + (r.b * T + r.t) * C + r.h * hs, hs);
  for (int u = 0; u <= r.t; ++u) {
    const float* k = seq + std::size_t(u) * 3 * C + C + r.h * hs;
    const float p = expf(head_dot(q, k, hs) * scale - lse[row]);
    const float ds = p * (head_dot(d_out, k + C, hs) - dot[row]) * scale;  // k + C: the value
    for (int j = 0; j < kMaxPerLane; ++j) {
      const int d = lane() + j * kWarp;
      if (d < hs) dq[j] += ds * k[d];
    }
  }
  float* dst = dqkv + (r.b * T + r.t) * 3 * C + r.h * hs;
  for (int j = 0; j < kMaxPerLane; ++j)
    if (lane() + j * kWarp < hs) dst[lane() + j * kWarp] += dq[j];
}

// dk and dv of one key row u: over the queries t >= u that saw it.
__global__ void attention_dkv_kernel(float* dqkv, const float* dout, const float* qkv, const float* lse,
                                     const float* dot, int B, int T, int C, int NH) {
  const std::size_t row = warp_row();  // (b, h, u)
  if (row >= std::size_t(B) * NH * T) return;
  const HeadRow r(row, T, NH);
  const int hs = C / NH, u = r.t;
  const float scale = 1.0f / sqrtf(float(hs));
  const float* seq = qkv + r.b * T * 3 * C;
  float k[kMaxPerLane], v[kMaxPerLane], dk[kMaxPerLane] = {}, dv[kMaxPerLane] = {};
  load_head(k, seq + std::size_t(u) * 3 * C + C + r.h * hs, hs);
  load_head(v, seq + std::size_t(u) * 3 * C + 2 * C + r.h * hs, hs);
  const std::size_t rows_of_head = row - u;  // the row of query 0 in this (b, h)
  for (int t = u; t < T; ++t) {
    const float* q = seq + std::size_t(t) * 3 * C + r.h * hs;
    const float* d_out = dout + (r.b * T + t) * C + r.h * hs;
    const float p = expf(head_dot(k, q, hs) * scale - lse[rows_of_head + t]);
    const float ds = p * (head_dot(v, d_out, hs) - dot[rows_of_head + t]) * scale;
    for (int j = 0; j < kMaxPerLane; ++j) {
      const int d = lane() + j * kWarp;
      if (d < hs) dk[j] += ds * q[d], dv[j] += p * d_out[d];
    }
  }
  float* dst = dqkv + (r.b * T + u) * 3 * C + r.h * hs;
  for (int j = 0; j < kMaxPerLane; ++j) {
    const int d = lane() + j * kWarp;
    if (d < hs) dst[C + d] += dk[j], dst[2 * C + d] += dv[j];
  }
}

}  // namespace

std::size_t attention_saved(int B, int T, int NH) { return 2 * std::size_t(B) * NH * T; }

void attention_forward(cudaStream_t stream, float* out, float* saved, const float* qkv, int B, int T, int C, int NH) {
  if (C / NH > kMaxPerLane * kWarp) die("attention: a head of more than 128 channels is not supported on CUDA");
  const std::size_t rows = std::size_t(B) * NH * T;
  attention_forward_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(out, saved, qkv, B, T, C, NH);
  CUDA_CHECK_LAUNCH();
}

void attention_backward(cudaStream_t stream, float* dqkv, const float* dout, const float* out, const float* qkv,
                        float* saved, int B, int T, int C, int NH) {
  const std::size_t rows = std::size_t(B) * NH * T;
  float* dot = saved + rows;
  attention_dot_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dot, dout, out, B, T, C, NH);
  CUDA_CHECK_LAUNCH();
  attention_dq_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dqkv, dout, qkv, saved, dot, B, T, C, NH);
  CUDA_CHECK_LAUNCH();
  attention_dkv_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dqkv, dout, qkv, saved, dot, B, T, C, NH);
  CUDA_CHECK_LAUNCH();
}

// ---- GELU, the loss, the optimizer -------------------------------------------------

namespace {

__device__ float gelu_u(float x) { return sqrtf(2.0f / float(M_PI)) * (x + kGeluCube * x * x * x); }

__global__ void gelu_forward_kernel(float* out, const float* x, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) out[i] = 0.5f * x[i] * (1.0f + tanhf(gelu_u(x[i])));
}

__global__ void gelu_backward_kernel(float* dx, const float* x, const float* dout, std::size_t n) {
  for (std::size_t i = first_index(); i < n; i += index_stride()) {
    const float th = tanhf(gelu_u(x[i]));
    const float du = sqrtf(2.0f / float(M_PI)) * (1.0f + 3.0f * kGeluCube * x[i] * x[i]);
    dx[i] += dout[i] * (0.5f * (1.0f + th) + 0.5f * x[i] * (1.0f - th * th) * du);
  }
}

// One block a row: the softmax over the first V logits, the padded ones 0.
__global__ void cross_entropy_padded_kernel(const float* logits, const int* targets, float* dlogits, int N, int V,
                                            int Vp, float* loss_acc) {
  __shared__ float shared[kThreads];
  const std::size_t n = blockIdx.x;
  const float* l = logits + n * Vp;
  float* d = dlogits + n * Vp;
  float top = -INFINITY;
  for (int v = threadIdx.x; v < V; v += kThreads) top = fmaxf(top, l[v]);
  top = block_reduce<true>(top, shared);
  float sum = 0.0f;
  for (int v = threadIdx.x; v < V; v += kThreads) sum += expf(l[v] - top);
  sum = block_reduce<false>(sum, shared);
  const int target = targets[n];
  for (int v = threadIdx.x; v < Vp; v += kThreads)
    d[v] = v < V ? (expf(l[v] - top) / sum - (v == target ? 1.0f : 0.0f)) / float(N) : 0.0f;
  if (threadIdx.x == 0) atomicAdd(loss_acc, (top + logf(sum) - l[target]) / float(N));
}

__global__ void sum_squares_kernel(const float* x, std::size_t n, float* acc) {
  __shared__ float shared[kThreads];
  float sum = 0.0f;
  for (std::size_t i = first_index(); i < n; i += index_stride()) sum += x[i] * x[i];
  sum = block_reduce<false>(sum, shared);
  if (threadIdx.x == 0) atomicAdd(acc, sum);
}

}  // namespace

void gelu_forward(cudaStream_t stream, float* out, const float* x, std::size_t n) {
  gelu_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, x, n);
  CUDA_CHECK_LAUNCH();
}

void gelu_backward(cudaStream_t stream, float* dx, const float* x, const float* dout, std::size_t n) {
  gelu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dx, x, dout, n);
  CUDA_CHECK_LAUNCH();
}

void cross_entropy_padded(cudaStream_t stream, const float* logits, const int* targets, float* dlogits, int N, int V,
                          int Vp, float* loss_acc) {
  if (N == 0) return;
  cross_entropy_padded_kernel<<<unsigned(N), kThreads, 0, stream>>>(logits, targets, dlogits, N, V, Vp, loss_acc);
  CUDA_CHECK_LAUNCH();
}

void sum_squares(cudaStream_t stream, const float* x, std::size_t n, float* acc) {
  sum_squares_kernel<<<std::min(blocks_for(n), 1024u), kThreads, 0, stream>>>(x, n, acc);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ddp::train::cuda::gpt
