#include "model/gpt.hpp"

#include <algorithm>

namespace ddp::train {

GptModel::BlockActs GptModel::block_acts(std::size_t N) const {
  const std::size_t C = std::size_t(config_.width);
  const std::size_t saved = ops_.attention_saved(max_batch_, config_.context, config_.heads);
  const auto f = [&](std::size_t n) { return alloc_floats(ops_, n); };
  return {f(N * C), f(N), f(N), f(3 * N * C), f(N * C),     f(saved), f(N * C), f(N * C),
          f(N * C), f(N), f(N), f(4 * N * C), f(4 * N * C), f(N * C), f(N * C)};
}

GptModel::GptModel(Ops& ops, const GptConfig& config, int max_batch)
    : ops_(ops), config_(config), layout_(gpt_layout(config)), max_batch_(max_batch) {
  const std::size_t N = std::size_t(max_batch) * std::size_t(config.context), C = std::size_t(config.width);
  const auto f = [&](std::size_t n) { return alloc_floats(ops_, n); };
  for (int l = 0; l < config.layers; ++l) blocks_.push_back(block_acts(N));
  tokens_ = alloc_ints(ops_, N), targets_ = alloc_ints(ops_, N);
  embedded_ = f(N * C);
  lnf_ = f(N * C), lnf_mean_ = f(N), lnf_rstd_ = f(N), loss_ = f(1);
  logits_ = f(N * std::size_t(config.padded_vocab)), dlogits_ = f(N * std::size_t(config.padded_vocab));
  d_stream_ = f(N * C), d_block_in_ = f(N * C), d_res2_ = f(N * C), d_narrow_ = f(N * C);
  d_qkv_ = f(3 * N * C), d_wide_ = f(4 * N * C), d_fc_ = f(4 * N * C);
}

// ---- forward ----------------------------------------------------------------

void GptModel::block_forward(const float* p, const GptBlockOffsets& o, const float* in, BlockActs& a) {
  const int N = B_ * T_, C = config_.width;
  const std::size_t n = std::size_t(N) * C;
  ops_.layernorm_forward(a.ln1.get(), a.ln1_mean.get(), a.ln1_rstd.get(), in, p + o.ln1_w, p + o.ln1_b, N, C);
  ops_.linear_forward(a.ln1.get(), p + o.qkv_w, p + o.qkv_b, a.qkv.get(), N, C, 3 * C);
  ops_.attention_forward(a.att_out.get(), a.att_saved.get(), a.qkv.get(), B_, T_, C, config_.heads);
  ops_.linear_forward(a.att_out.get(), p + o.proj_w, p + o.proj_b, a.proj.get(), N, C, C);
  ops_.copy(a.res2.get(), in, n);
  ops_.add(a.res2.get(), a.proj.get(), n);
  ops_.layernorm_forward(a.ln2.get(), a.ln2_mean.get(), a.ln2_rstd.get(), a.res2.get(), p + o.ln2_w, p + o.ln2_b, N, C);
  ops_.linear_forward(a.ln2.get(), p + o.fc_w, p + o.fc_b, a.fc.get(), N, C, 4 * C);
  ops_.gelu_forward(a.fc_gelu.get(), a.fc.get(), 4 * n);
  ops_.linear_forward(a.fc_gelu.get(), p + o.fc_proj_w, p + o.fc_proj_b, a.fc_proj.get(), N, 4 * C, C);
  ops_.copy(a.res3.get(), a.res2.get(), n);
  ops_.add(a.res3.get(), a.fc_proj.get(), n);
}

float GptModel::forward(const float* p, const std::uint16_t* tokens, const std::uint16_t* targets, int B, int T) {
  B_ = std::min(B, max_batch_), T_ = std::min(T, config_.context);
  const int N = B_ * T_, C = config_.width;
  host_tokens_.assign(tokens, tokens + N);
  ops_.upload_int(tokens_.get(), host_tokens_.data(), std::size_t(N));
  host_tokens_.assign(targets, targets + N);
  ops_.upload_int(targets_.get(), host_tokens_.data(), std::size_t(N));
  ops_.embed_forward(embedded_.get(), tokens_.get(), p + layout_.wte, p + layout_.wpe, B_, T_, C);
  const float* stream = embedded_.get();
  for (int l = 0; l < config_.layers; ++l) {
    block_forward(p, layout_.blocks[std::size_t(l)], stream, blocks_[std::size_t(l)]);
    stream = blocks_[std::size_t(l)].res3.get();
  }
  ops_.layernorm_forward(lnf_.get(), lnf_mean_.get(), lnf_rstd_.get(), stream, p + layout_.lnf_w, p + layout_.lnf_b, N,
                         C);
  ops_.linear_forward(lnf_.get(), p + layout_.wte, nullptr, logits_.get(), N, C, config_.padded_vocab);
  ops_.fill(loss_.get(), 0.0f, 1);
  ops_.cross_entropy_padded(logits_.get(), targets_.get(), dlogits_.get(), N, config_.vocab, config_.padded_vocab,
                            loss_.get());
  float loss = 0;
  ops_.download(&loss, loss_.get(), 1);
  return loss;
}

// ---- backward ---------------------------------------------------------------

void GptModel::block_backward(const float* p, float* g, const GptBlockOffsets& o, const float* in, const BlockActs& a,
                              const float* dres3, float* din) {
  const int N = B_ * T_, C = config_.width;
  const std::size_t n = std::size_t(N) * C;
  // res3 = res2 + fc_proj(gelu(fc(ln2(res2))))
  ops_.linear_backward(a.fc_gelu.get(), p + o.fc_proj_w, dres3, g + o.fc_proj_w, g + o.fc_proj_b, d_wide_.get(), N,
                       4 * C, C);
  ops_.fill(d_fc_.get(), 0.0f, 4 * n);
  ops_.gelu_backward(d_fc_.get(), a.fc.get(), d_wide_.get(), 4 * n);
  ops_.linear_backward(a.ln2.get(), p + o.fc_w, d_fc_.get(), g + o.fc_w, g + o.fc_b, d_narrow_.get(), N, C, 4 * C);
  ops_.copy(d_res2_.get(), dres3, n);
  ops_.layernorm_backward(d_res2_.get(), g + o.ln2_w, g + o.ln2_b, d_narrow_.get(), a.res2.get(), p + o.ln2_w,
                          a.ln2_mean.get(), a.ln2_rstd.get(), N, C);
  // res2 = in + proj(attention(qkv(ln1(in))))
  ops_.linear_backward(a.att_out.get(), p + o.proj_w, d_res2_.get(), g + o.proj_w, g + o.proj_b, d_narrow_.get(), N, C,
                       C);
  ops_.fill(d_qkv_.get(), 0.0f, 3 * n);
  ops_.attention_backward(d_qkv_.get(), d_narrow_.get(), a.att_out.get(), a.qkv.get(), a.att_saved.get(), B_, T_, C,
                          config_.heads);
  ops_.linear_backward(a.ln1.get(), p + o.qkv_w, d_qkv_.get(), g + o.qkv_w, g + o.qkv_b, d_narrow_.get(), N, C, 3 * C);
  ops_.copy(din, d_res2_.get(), n);
  ops_.layernorm_backward(din, g + o.ln1_w, g + o.ln1_b, d_narrow_.get(), in, p + o.ln1_w, a.ln1_mean.get(),
                          a.ln1_rstd.get(), N, C);
}

void GptModel::backward(const float* p, float* g, const std::function<void(int)>& group_done) {
  const auto done = [&](int group) {
    if (group_done) group_done(group);
  };
  const int N = B_ * T_, C = config_.width, L = config_.layers;
  // logits = lnf(stream) wte^T: the head's gradient goes into wte, shared with the embedding.
  ops_.linear_backward(lnf_.get(), p + layout_.wte, dlogits_.get(), g + layout_.wte, nullptr, d_narrow_.get(), N, C,
                       config_.padded_vocab);
  const float* last = L > 0 ? blocks_[std::size_t(L - 1)].res3.get() : embedded_.get();
  ops_.fill(d_stream_.get(), 0.0f, std::size_t(N) * C);
  ops_.layernorm_backward(d_stream_.get(), g + layout_.lnf_w, g + layout_.lnf_b, d_narrow_.get(), last,
                          p + layout_.lnf_w, lnf_mean_.get(), lnf_rstd_.get(), N, C);
  done(L + 1);
  for (int l = L - 1; l >= 0; --l) {
    const float* in = l > 0 ? blocks_[std::size_t(l - 1)].res3.get() : embedded_.get();
    block_backward(p, g, layout_.blocks[std::size_t(l)], in, blocks_[std::size_t(l)], d_stream_.get(),
                   d_block_in_.get());
    std::swap(d_stream_, d_block_in_);
    done(l + 1);
  }
  ops_.embed_backward(g + layout_.wte, g + layout_.wpe, d_stream_.get(), tokens_.get(), B_, T_, C);
  done(0);
}

}  // namespace ddp::train
