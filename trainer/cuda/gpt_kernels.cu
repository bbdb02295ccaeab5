// Row-major as model/gpt_layers.cpp: activations [B, T, C], N = B x T rows;
// qkv [B, T, 3C] (query, key, value side by side); the attention's per-row
// values [B, NH, T]. A warp works on a row where the row is reduced (a
// LayerNorm row, a query's scores); its lanes split the channels.
#include <algorithm>
#include <cmath>

#include "cuda/cuda_context.cuh"
#include "cuda/gpt_kernels.cuh"
#include "cuda/grid.cuh"

namespace ddp::train::cuda::gpt {
namespace {

constexpr int kWarp = 32;
constexpr int kMaxPerLane = 4;  // a head of at most 128 channels: 4 a lane
constexpr float kLayerNormEps = 1e-5f, kGeluCube = 0.044715f;

unsigned warp_blocks_for(std::size_t rows) { return unsigned((rows * kWarp + kThreads - 1) / kThreads); }
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
  for (std::size_t i = first_index(); i < std::size_t(T) * C; i += index_stride()) {  // (t, c)
    float sum = 0.0f;
    for (int b = 0; b < B; ++b) sum += dout[std::size_t(b) * T * C + i];
    dwpe[i] += sum;
  }
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

// A warp's attention row, row = (b x NH + h) x T + t, and where its head's
// vectors are: query, key and value of position u in qkv [B, T, 3C], and
// position u's channels of this head in a [B, T, C] tensor.
struct Head {
  std::size_t row, first_row;  // first_row: position 0's row of this (b, h)
  std::size_t b;
  int h, t, hs, T, C;
  float scale;  // 1 / sqrt(hs)
  __device__ Head(std::size_t row_, int T_, int C_, int NH)
      : row(row_),
        first_row(row_ - row_ % T_),
        b(row_ / (std::size_t(T_) * NH)),
        h(int(row_ / T_ % NH)),
        t(int(row_ % T_)),
        hs(C_ / NH),
        T(T_),
        C(C_),
        scale(1.0f / sqrtf(float(C_ / NH))) {}
  __device__ std::size_t q(int u) const { return (b * T + u) * 3 * C + h * hs; }
  __device__ std::size_t k(int u) const { return q(u) + C; }
  __device__ std::size_t v(int u) const { return q(u) + 2 * C; }
  __device__ std::size_t at(int u) const { return (b * T + u) * C + h * hs; }
};

// This lane's channels of a head's vector (d = lane, lane + 32, ...).
__device__ void load_head(float* to, const float* from, int hs) {
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane() + k * kWarp;
    to[k] = d < hs ? from[d] : 0.0f;
  }
}
// mine (this lane's channels) . other (a whole head's vector), over the warp.
__device__ float head_dot(const float* mine, const float* other, int hs) {
  float partial = 0.0f;
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane() + k * kWarp;
    if (d < hs) partial += mine[k] * other[d];
  }
  return warp_sum(partial);
}
// to[d] += mine[d] for this lane's channels.
__device__ void add_head(float* to, const float* mine, int hs) {
  for (int k = 0; k < kMaxPerLane; ++k)
    if (lane() + k * kWarp < hs) to[lane() + k * kWarp] += mine[k];
}
// mine[d] = mine[d] * keep + p * other[d] for this lane's channels.
__device__ void mix_head(float* mine, float keep, float p, const float* other, int hs) {
  for (int k = 0; k < kMaxPerLane; ++k) {
    const int d = lane() + k * kWarp;
    mine[k] = mine[k] * keep + (d < hs ? p * other[d] : 0.0f);
  }
}

// One warp a query row: the scores over keys 0..t one by one, with an online
// softmax (the running maximum and sum, earlier terms rescaled when the
// maximum grows), so no row of T probabilities is kept; the row's
// log-sum-exp is, for backward.
__global__ void attention_forward_kernel(float* out, float* lse, const float* qkv, std::size_t rows, int T, int C,
                                         int NH) {
  if (warp_row() >= rows) return;
  const Head a(warp_row(), T, C, NH);
  float q[kMaxPerLane], o[kMaxPerLane] = {};
  load_head(q, qkv + a.q(a.t), a.hs);
  float top = -INFINITY, sum = 0.0f;
  for (int u = 0; u <= a.t; ++u) {
    const float s = head_dot(q, qkv + a.k(u), a.hs) * a.scale;
    const float next_top = fmaxf(top, s);
    const float rescale = expf(top - next_top), p = expf(s - next_top);
    sum = sum * rescale + p;
    mix_head(o, rescale, p, qkv + a.v(u), a.hs);
    top = next_top;
  }
  for (float& x : o) x /= sum;
  float* dst = out + a.at(a.t);
  for (int k = 0; k < kMaxPerLane; ++k)
    if (lane() + k * kWarp < a.hs) dst[lane() + k * kWarp] = o[k];
  if (lane() == 0) lse[a.row] = top + logf(sum);
}

// Each query row's dout . out: the softmax's backward subtracts it.
__global__ void attention_dot_kernel(float* dot, const float* dout, const float* out, std::size_t rows, int T, int C,
                                     int NH) {
  if (warp_row() >= rows) return;
  const Head a(warp_row(), T, C, NH);
  float mine[kMaxPerLane];
  load_head(mine, dout + a.at(a.t), a.hs);
  const float d = head_dot(mine, out + a.at(a.t), a.hs);
  if (lane() == 0) dot[a.row] = d;
}

// dq of one query row t: over keys u <= t, with p recomputed from the log-sum-exp.
__global__ void attention_dq_kernel(float* dqkv, const float* dout, const float* qkv, const float* lse,
                                    const float* dot, std::size_t rows, int T, int C, int NH) {
  if (warp_row() >= rows) return;
  const Head a(warp_row(), T, C, NH);
  float q[kMaxPerLane], d_out[kMaxPerLane], dq[kMaxPerLane] = {};
  load_head(q, qkv + a.q(a.t), a.hs);
  load_head(d_out, dout + a.at(a.t), a.hs);
  for (int u = 0; u <= a.t; ++u) {
    const float p = expf(head_dot(q, qkv + a.k(u), a.hs) * a.scale - lse[a.row]);
    const float ds = p * (head_dot(d_out, qkv + a.v(u), a.hs) - dot[a.row]) * a.scale;
    mix_head(dq, 1.0f, ds, qkv + a.k(u), a.hs);
  }
  add_head(dqkv + a.q(a.t), dq, a.hs);
}

// dk and dv of one key row u (the warp's t): over the queries t >= u that saw it.
__global__ void attention_dkv_kernel(float* dqkv, const float* dout, const float* qkv, const float* lse,
                                     const float* dot, std::size_t rows, int T, int C, int NH) {
  if (warp_row() >= rows) return;
  const Head a(warp_row(), T, C, NH);
  const int u = a.t;
  float k[kMaxPerLane], v[kMaxPerLane], dk[kMaxPerLane] = {}, dv[kMaxPerLane] = {};
  load_head(k, qkv + a.k(u), a.hs);
  load_head(v, qkv + a.v(u), a.hs);
  for (int t = u; t < T; ++t) {
    const float p = expf(head_dot(k, qkv + a.q(t), a.hs) * a.scale - lse[a.first_row + t]);
    const float ds = p * (head_dot(v, dout + a.at(t), a.hs) - dot[a.first_row + t]) * a.scale;
    mix_head(dk, 1.0f, ds, qkv + a.q(t), a.hs);
    mix_head(dv, 1.0f, p, dout + a.at(t), a.hs);
  }
  add_head(dqkv + a.k(u), dk, a.hs);
  add_head(dqkv + a.v(u), dv, a.hs);
}

}  // namespace

std::size_t attention_saved(int B, int T, int NH) { return 2 * std::size_t(B) * NH * T; }

void attention_forward(cudaStream_t stream, float* out, float* saved, const float* qkv, int B, int T, int C, int NH) {
  if (C / NH > kMaxPerLane * kWarp) die("attention: a head of more than 128 channels is not supported on CUDA");
  const std::size_t rows = std::size_t(B) * NH * T;
  attention_forward_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(out, saved, qkv, rows, T, C, NH);
  CUDA_CHECK_LAUNCH();
}

void attention_backward(cudaStream_t stream, float* dqkv, const float* dout, const float* out, const float* qkv,
                        float* saved, int B, int T, int C, int NH) {
  const std::size_t rows = std::size_t(B) * NH * T;
  float* dot = saved + rows;
  attention_dot_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dot, dout, out, rows, T, C, NH);
  CUDA_CHECK_LAUNCH();
  attention_dq_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dqkv, dout, qkv, saved, dot, rows, T, C, NH);
  CUDA_CHECK_LAUNCH();
  attention_dkv_kernel<<<warp_blocks_for(rows), kThreads, 0, stream>>>(dqkv, dout, qkv, saved, dot, rows, T, C, NH);
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

// The sum of squares in a fixed order, with no atomics: each block's partial
// sum into sum_partials, then one block adds those. The gradient's norm sets
// the clip factor, which must be the same on every rank (ranks whose
// updates differ in the last bit drift apart).
constexpr int kSumBlocks = 1024;
__device__ float sum_partials[kSumBlocks];

__global__ void sum_squares_partial_kernel(const float* x, std::size_t n) {
  __shared__ float shared[kThreads];
  float sum = 0.0f;
  for (std::size_t i = first_index(); i < n; i += index_stride()) sum += x[i] * x[i];
  sum = block_reduce<false>(sum, shared);
  if (threadIdx.x == 0) sum_partials[blockIdx.x] = sum;
}

__global__ void sum_squares_total_kernel(int blocks, float* acc) {
  __shared__ float shared[kThreads];
  float sum = 0.0f;
  for (int b = int(threadIdx.x); b < blocks; b += kThreads) sum += sum_partials[b];
  sum = block_reduce<false>(sum, shared);
  if (threadIdx.x == 0) *acc += sum;
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
  if (n == 0) return;
  const unsigned blocks = std::min(blocks_for(n), unsigned(kSumBlocks));
  sum_squares_partial_kernel<<<blocks, kThreads, 0, stream>>>(x, n);
  CUDA_CHECK_LAUNCH();
  sum_squares_total_kernel<<<1, kThreads, 0, stream>>>(int(blocks), acc);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ddp::train::cuda::gpt
