// The GPT's operations on one GPU (--model gpt, fp32), for CudaOps: the
// embeddings, LayerNorm, causal attention with an online softmax, GELU, the
// cross-entropy over a padded vocabulary and the gradient's sum of squares
// (AdamW: optimizer_kernels.cuh). Each is checked against model/gpt_layers.hpp's CPU function of the
// same name by ddp-gpu-selftest (tests/gpu/gpt_parity.cpp). Written for
// correctness first: every reduction over rows is a loop in one thread or
// one warp, in a fixed order, so each result is the same from run to run
// (only the loss adds its rows with atomics: it is reported, never
// applied). Every call only enqueues on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ddp::train::cuda::gpt {

void embed_forward(cudaStream_t stream, float* out, const int* tokens, const float* wte, const float* wpe, int B, int T,
                   int C);
void embed_backward(cudaStream_t stream, float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T,
                    int C);
void layernorm_forward(cudaStream_t stream, float* out, float* mean, float* rstd, const float* x, const float* w,
                       const float* b, int N, int C);
void layernorm_backward(cudaStream_t stream, float* dx, float* dw, float* db, const float* dout, const float* x,
                        const float* w, const float* mean, const float* rstd, int N, int C);
// `saved`: [2, B, NH, T]: each query row's log-sum-exp of its scores, then
// backward's scratch (each row's dout . out).
std::size_t attention_saved(int B, int T, int NH);
void attention_forward(cudaStream_t stream, float* out, float* saved, const float* qkv, int B, int T, int C, int NH);
void attention_backward(cudaStream_t stream, float* dqkv, const float* dout, const float* out, const float* qkv,
                        float* saved, int B, int T, int C, int NH);
void gelu_forward(cudaStream_t stream, float* out, const float* x, std::size_t n);
void gelu_backward(cudaStream_t stream, float* dx, const float* x, const float* dout, std::size_t n);
void cross_entropy_padded(cudaStream_t stream, const float* logits, const int* targets, float* dlogits, int N, int V,
                          int Vp, float* loss_acc);
void sum_squares(cudaStream_t stream, const float* x, std::size_t n, float* acc);

}  // namespace ddp::train::cuda::gpt
