// The GPT-2-class model on the CPU, fp32 (--model gpt): token and position
// embeddings, pre-norm blocks (LayerNorm, causal self-attention, LayerNorm,
// GELU MLP, each added to the residual stream), a final LayerNorm and the
// output head tied to the token embedding; cross-entropy of each position's
// next token. Read top to bottom: forward() calls each block's forward,
// backward() each block's backward in reverse (llm.c's way). Every
// activation is allocated once, for `max_batch` sequences of the context.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/gpt_config.hpp"

namespace ddp::train {

class GptModel {
 public:
  GptModel(const GptConfig& config, int max_batch);

  // B sequences of T <= context tokens, and each position's target (the next
  // token): the mean loss. Keeps the activations for backward().
  float forward(const float* params, const std::uint16_t* tokens, const std::uint16_t* targets, int B, int T);
  // Adds d(mean loss)/d(parameters) of the last forward() into `grads` (the
  // flat layout of gpt_layout()). `group_done(g)` is called as each group of
  // gpt_param_layout() is complete (the final LayerNorm's first, then the
  // blocks from the last, the embeddings last: the head adds to wte), so
  // that its bucket's all-reduce can start while the rest is computed.
  void backward(const float* params, float* grads, const std::function<void(int)>& group_done = {});

  const GptConfig& config() const { return config_; }
  const GptLayout& layout() const { return layout_; }
  const float* logits() const { return logits_.data(); }  // [B, T, padded_vocab] of the last forward()

 private:
  // One block's activations (its input is the residual stream before it).
  struct BlockActs {
    std::vector<float> ln1, ln1_mean, ln1_rstd, qkv, att_out, probs, proj, res2;
    std::vector<float> ln2, ln2_mean, ln2_rstd, fc, fc_gelu, fc_proj, res3;
  };
  void block_forward(const float* p, const GptBlockOffsets& o, const float* in, BlockActs& a);
  // d(loss)/d(block output) in `dres3`, out: d(loss)/d(block input) into `din` (overwritten).
  void block_backward(const float* p, float* g, const GptBlockOffsets& o, const float* in, const BlockActs& a,
                      const float* dres3, float* din);

  GptConfig config_;
  GptLayout layout_;
  int max_batch_ = 0, B_ = 0, T_ = 0;
  std::vector<std::uint16_t> tokens_, targets_;
  std::vector<float> embedded_;  // the residual stream into block 0
  std::vector<BlockActs> blocks_;
  std::vector<float> lnf_, lnf_mean_, lnf_rstd_, logits_, dlogits_;
  // Backward's scratch: gradients of one tensor each, reused block by block.
  std::vector<float> d_stream_, d_block_in_, d_res2_, d_wide_, d_fc_, d_narrow_, d_qkv_, d_scores_;
};

}  // namespace ddp::train
