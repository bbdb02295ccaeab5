// The CPU layers of the GPT-2-class model (--model gpt), forward and backward
// spelled out, fp32, row-major: B sequences of T positions of C channels,
// activations [B, T, C]; N = B * T rows where the position does not matter.
// Backward functions accumulate (+=) into parameter gradients and into the
// input gradients they name as accumulated; the caller owns every buffer.
// The matrix products (attention's projections, the MLP, the head) are
// layers.hpp's linear_forward / linear_backward (OpenBLAS).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddp::train::gpt {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. Tokens are checked when their
// file is read (data/token_file.hpp): each indexes wte's rows.
void embed_forward(float* out, const std::uint16_t* tokens, const float* wte, const float* wpe, int B, int T, int C);
// dwte[tokens[b,t],:] += dout[b,t,:], dwpe[t,:] += dout[b,t,:].
void embed_backward(float* dwte, float* dwpe, const float* dout, const std::uint16_t* tokens, int B, int T, int C);

// Per row: out = (x - mean) / sqrt(var + 1e-5) * w + b (PyTorch's LayerNorm);
// mean and rstd [N] kept for the backward.
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                       int C);
// dx += ..., dw += ..., db += ...
void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                        const float* mean, const float* rstd, int N, int C);

// Causal self-attention of NH heads over qkv [B, T, 3C] (query, key, value
// side by side, as the QKV projection makes them): out [B, T, C], the heads'
// outputs side by side; probs [B, NH, T, T] the softmax of each query over
// the keys up to its own position (zero after it), kept for the backward.
void attention_forward(float* out, float* probs, const float* qkv, int B, int T, int C, int NH);
// dqkv += ... (query, key and value gradients); `dscores` [T] is scratch.
void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* probs, float* dscores, int B,
                        int T, int C, int NH);

// GPT-2's GELU, the tanh approximation (PyTorch's approximate='tanh').
void gelu_forward(float* out, const float* x, std::size_t n);
void gelu_backward(float* dx, const float* x, const float* dout, std::size_t n);  // dx += ...

// Mean cross-entropy of `targets` over the first V of Vp logits a row (the
// vocabulary padded to Vp for the kernels: the padded columns take no part in
// the softmax); dlogits = d(mean loss)/d(logits), zero in the padded columns.
float cross_entropy_padded(const float* logits, const std::uint16_t* targets, float* dlogits, int N, int V, int Vp);

}  // namespace ddp::train::gpt
