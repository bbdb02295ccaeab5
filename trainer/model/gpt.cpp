#include "model/gpt.hpp"

#include <algorithm>

#include "model/gpt_layers.hpp"
#include "model/layers.hpp"

namespace ddp::train {

namespace {

std::vector<float> sized(std::size_t n) { return std::vector<float>(n, 0.0f); }

}  // namespace

GptModel::GptModel(const GptConfig& config, int max_batch)
    : config_(config), layout_(gpt_layout(config)), max_batch_(max_batch) {
  const std::size_t N = std::size_t(max_batch) * std::size_t(config.context), C = std::size_t(config.width);
  const std::size_t probs = N * std::size_t(config.heads) * std::size_t(config.context);
  for (int l = 0; l < config.layers; ++l)
    blocks_.push_back({sized(N * C), sized(N), sized(N), sized(3 * N * C), sized(N * C), sized(probs), sized(N * C),
                       sized(N * C), sized(N * C), sized(N), sized(N), sized(4 * N * C), sized(4 * N * C), sized(N * C),
                       sized(N * C)});
  embedded_ = sized(N * C);
  lnf_ = sized(N * C), lnf_mean_ = sized(N), lnf_rstd_ = sized(N);
  logits_ = sized(N * std::size_t(config.padded_vocab)), dlogits_ = sized(logits_.size());
  d_stream_ = sized(N * C), d_block_in_ = sized(N * C), d_res2_ = sized(N * C), d_narrow_ = sized(N * C);
  d_qkv_ = sized(3 * N * C), d_wide_ = sized(4 * N * C), d_fc_ = sized(4 * N * C);
  d_scores_ = sized(std::size_t(config.context));
}

// ---- forward ----------------------------------------------------------------

void GptModel::block_forward(const float* p, const GptBlockOffsets& o, const float* in, BlockActs& a) {
  const int N = B_ * T_, C = config_.width;
  gpt::layernorm_forward(a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), in, p + o.ln1_w, p + o.ln1_b, N, C);
  cpu::linear_forward(a.ln1.data(), p + o.qkv_w, p + o.qkv_b, a.qkv.data(), N, C, 3 * C);
  gpt::attention_forward(a.att_out.data(), a.probs.data(), a.qkv.data(), B_, T_, C, config_.heads);
  cpu::linear_forward(a.att_out.data(), p + o.proj_w, p + o.proj_b, a.proj.data(), N, C, C);
  for (std::size_t i = 0; i < std::size_t(N) * C; ++i) a.res2[i] = in[i] + a.proj[i];
  gpt::layernorm_forward(a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.res2.data(), p + o.ln2_w, p + o.ln2_b, N,
                         C);
  cpu::linear_forward(a.ln2.data(), p + o.fc_w, p + o.fc_b, a.fc.data(), N, C, 4 * C);
  gpt::gelu_forward(a.fc_gelu.data(), a.fc.data(), std::size_t(N) * 4 * C);
  cpu::linear_forward(a.fc_gelu.data(), p + o.fc_proj_w, p + o.fc_proj_b, a.fc_proj.data(), N, 4 * C, C);
  for (std::size_t i = 0; i < std::size_t(N) * C; ++i) a.res3[i] = a.res2[i] + a.fc_proj[i];
}

float GptModel::forward(const float* p, const std::uint16_t* tokens, const std::uint16_t* targets, int B, int T) {
  B_ = std::min(B, max_batch_), T_ = std::min(T, config_.context);
  const int N = B_ * T_, C = config_.width;
  tokens_.assign(tokens, tokens + N);
  targets_.assign(targets, targets + N);
  gpt::embed_forward(embedded_.data(), tokens, p + layout_.wte, p + layout_.wpe, B_, T_, C);
  const float* stream = embedded_.data();
  for (int l = 0; l < config_.layers; ++l) {
    block_forward(p, layout_.blocks[std::size_t(l)], stream, blocks_[std::size_t(l)]);
    stream = blocks_[std::size_t(l)].res3.data();
  }
  gpt::layernorm_forward(lnf_.data(), lnf_mean_.data(), lnf_rstd_.data(), stream, p + layout_.lnf_w, p + layout_.lnf_b,
                         N, C);
  cpu::linear_forward(lnf_.data(), p + layout_.wte, nullptr, logits_.data(), N, C, config_.padded_vocab);
  return gpt::cross_entropy_padded(logits_.data(), targets, dlogits_.data(), N, config_.vocab, config_.padded_vocab);
}

// ---- backward ---------------------------------------------------------------

void GptModel::block_backward(const float* p, float* g, const GptBlockOffsets& o, const float* in, const BlockActs& a,
                              const float* dres3, float* din) {
  const int N = B_ * T_, C = config_.width;
  const std::size_t n = std::size_t(N) * C;
  // res3 = res2 + fc_proj(gelu(fc(ln2(res2))))
  cpu::linear_backward(a.fc_gelu.data(), p + o.fc_proj_w, dres3, g + o.fc_proj_w, g + o.fc_proj_b, d_wide_.data(), N,
                       4 * C, C);
  std::fill_n(d_fc_.begin(), 4 * n, 0.0f);
  gpt::gelu_backward(d_fc_.data(), a.fc.data(), d_wide_.data(), 4 * n);
  cpu::linear_backward(a.ln2.data(), p + o.fc_w, d_fc_.data(), g + o.fc_w, g + o.fc_b, d_narrow_.data(), N, C, 4 * C);
  std::copy_n(dres3, n, d_res2_.begin());
  gpt::layernorm_backward(d_res2_.data(), g + o.ln2_w, g + o.ln2_b, d_narrow_.data(), a.res2.data(), p + o.ln2_w,
                          a.ln2_mean.data(), a.ln2_rstd.data(), N, C);
  // res2 = in + proj(attention(qkv(ln1(in))))
  cpu::linear_backward(a.att_out.data(), p + o.proj_w, d_res2_.data(), g + o.proj_w, g + o.proj_b, d_narrow_.data(), N,
                       C, C);
  std::fill_n(d_qkv_.begin(), 3 * n, 0.0f);
  gpt::attention_backward(d_qkv_.data(), d_narrow_.data(), a.qkv.data(), a.probs.data(), d_scores_.data(), B_, T_, C,
                          config_.heads);
  cpu::linear_backward(a.ln1.data(), p + o.qkv_w, d_qkv_.data(), g + o.qkv_w, g + o.qkv_b, d_narrow_.data(), N, C,
                       3 * C);
  std::copy_n(d_res2_.begin(), n, din);
  gpt::layernorm_backward(din, g + o.ln1_w, g + o.ln1_b, d_narrow_.data(), in, p + o.ln1_w, a.ln1_mean.data(),
                          a.ln1_rstd.data(), N, C);
}

void GptModel::backward(const float* p, float* g, const std::function<void(int)>& group_done) {
  const auto done = [&](int group) {
    if (group_done) group_done(group);
  };
  const int N = B_ * T_, C = config_.width, L = config_.layers;
  // logits = lnf(stream) wte^T: the head's gradient goes into wte, shared with the embedding.
  cpu::linear_backward(lnf_.data(), p + layout_.wte, dlogits_.data(), g + layout_.wte, nullptr, d_narrow_.data(), N, C,
                       config_.padded_vocab);
  const float* last = L > 0 ? blocks_[std::size_t(L - 1)].res3.data() : embedded_.data();
  std::fill(d_stream_.begin(), d_stream_.end(), 0.0f);
  gpt::layernorm_backward(d_stream_.data(), g + layout_.lnf_w, g + layout_.lnf_b, d_narrow_.data(), last,
                          p + layout_.lnf_w, lnf_mean_.data(), lnf_rstd_.data(), N, C);
  done(L + 1);
  for (int l = L - 1; l >= 0; --l) {
    const float* in = l > 0 ? blocks_[std::size_t(l - 1)].res3.data() : embedded_.data();
    block_backward(p, g, layout_.blocks[std::size_t(l)], in, blocks_[std::size_t(l)], d_stream_.data(),
                   d_block_in_.data());
    std::swap(d_stream_, d_block_in_);
    done(l + 1);
  }
  gpt::embed_backward(g + layout_.wte, g + layout_.wpe, d_stream_.data(), tokens_.data(), B_, T_, C);
  done(0);
}

}  // namespace ddp::train
