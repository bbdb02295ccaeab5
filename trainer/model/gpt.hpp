// The GPT-2-class model (--model gpt), fp32, on an Ops (model/ops.hpp: the
// CPU's or one GPU's): token and position embeddings, pre-norm blocks
// (LayerNorm, causal self-attention, LayerNorm, GELU MLP, each added to the
// residual stream), a final LayerNorm and the output head tied to the token
// embedding; cross-entropy of each position's next token. Read top to
// bottom: forward() calls each block's forward, backward() each block's
// backward in reverse (llm.c's way). Every activation is allocated once, in
// ops memory, for `max_batch` sequences of the context; parameters and
// gradients are ops memory too.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/gpt_config.hpp"
#include "model/ops.hpp"

namespace ddp::train {

class GptModel {
 public:
  GptModel(Ops& ops, const GptConfig& config, int max_batch);

  // B sequences of T <= context tokens, and each position's target (the next
  // token), in host memory: the mean loss (read back from ops memory). Keeps
  // the activations for backward().
  float forward(const float* params, const std::uint16_t* tokens, const std::uint16_t* targets, int B, int T);
  // Adds d(mean loss)/d(parameters) of the last forward() into `grads` (the
  // flat layout of gpt_layout()). `group_done(g)` is called as each group of
  // gpt_param_layout() is complete (the final LayerNorm's first, then the
  // blocks from the last, the embeddings last: the head adds to wte), so
  // that its bucket's all-reduce can start while the rest is computed.
  void backward(const float* params, float* grads, const std::function<void(int)>& group_done = {});

  const GptConfig& config() const { return config_; }
  const GptLayout& layout() const { return layout_; }
  const float* logits() const { return logits_.get(); }  // [B, T, padded_vocab] of the last forward(), ops memory

 private:
  // One block's activations (its input is the residual stream before it).
  struct BlockActs {
    OpsArray<float> ln1, ln1_mean, ln1_rstd, qkv, att_out, att_saved, proj, res2;
    OpsArray<float> ln2, ln2_mean, ln2_rstd, fc, fc_gelu, fc_proj, res3;
  };
  BlockActs block_acts(std::size_t rows) const;
  void block_forward(const float* p, const GptBlockOffsets& o, const float* in, BlockActs& a);
  // d(loss)/d(block output) in `dres3`, out: d(loss)/d(block input) into `din` (overwritten).
  void block_backward(const float* p, float* g, const GptBlockOffsets& o, const float* in, const BlockActs& a,
                      const float* dres3, float* din);

  Ops& ops_;
  GptConfig config_;
  GptLayout layout_;
  int max_batch_ = 0, B_ = 0, T_ = 0;
  std::vector<int> host_tokens_;  // forward()'s tokens and targets as ints, for their upload
  OpsArray<int> tokens_, targets_;
  OpsArray<float> embedded_;  // the residual stream into block 0
  std::vector<BlockActs> blocks_;
  OpsArray<float> lnf_, lnf_mean_, lnf_rstd_, logits_, dlogits_, loss_;
  // Backward's scratch: gradients of one tensor each, reused block by block.
  OpsArray<float> d_stream_, d_block_in_, d_res2_, d_wide_, d_fc_, d_narrow_, d_qkv_;
};

}  // namespace ddp::train
