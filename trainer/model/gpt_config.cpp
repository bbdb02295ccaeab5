#include "model/gpt_config.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "data/token_file.hpp"

namespace ddp::train {

std::string GptConfig::describe() const {
  return "gpt " + std::to_string(layers) + " layers, " + std::to_string(heads) + " heads, width " +
         std::to_string(width) + ", context " + std::to_string(context) + ", vocabulary " + std::to_string(vocab) +
         " (padded " + std::to_string(padded_vocab) + ")";
}

Result<GptConfig> gpt_config(const std::string& preset, int layers, int heads, int width, int context, int vocab) {
  GptConfig c;
  if (preset == "gpt2-124m")
    c = {12, 12, 768, 1024, 50257, 0};
  else if (preset != "small")
    return fail("--gpt-preset " + preset + ": gpt2-124m or small");
  if (layers > 0) c.layers = layers;
  if (heads > 0) c.heads = heads;
  if (width > 0) c.width = width;
  if (context > 0) c.context = context;
  if (vocab > 0) c.vocab = vocab;
  if (c.width % c.heads != 0)
    return fail("--gpt-heads " + std::to_string(c.heads) + " does not divide --gpt-width " + std::to_string(c.width));
  if (std::uint32_t(c.vocab) > kMaxVocab)
    return fail("--gpt-vocab " + std::to_string(c.vocab) + ": a token file holds at most 65,536 tokens");
  c.padded_vocab = (c.vocab + 63) / 64 * 64;
  return c;
}

GptLayout gpt_layout(const GptConfig& c) {
  const std::size_t C = std::size_t(c.width);
  GptLayout l;
  std::size_t at = 0;
  const auto take = [&at](std::size_t n) { return std::exchange(at, at + n); };
  l.wte = take(std::size_t(c.padded_vocab) * C);
  l.wpe = take(std::size_t(c.context) * C);
  for (int i = 0; i < c.layers; ++i) {
    GptBlockOffsets b{};
    b.ln1_w = take(C), b.ln1_b = take(C);
    b.qkv_w = take(3 * C * C), b.qkv_b = take(3 * C);
    b.proj_w = take(C * C), b.proj_b = take(C);
    b.ln2_w = take(C), b.ln2_b = take(C);
    b.fc_w = take(4 * C * C), b.fc_b = take(4 * C);
    b.fc_proj_w = take(4 * C * C), b.fc_proj_b = take(C);
    l.blocks.push_back(b);
  }
  l.lnf_w = take(C), l.lnf_b = take(C);
  l.total = at;
  return l;
}

ParamLayout gpt_param_layout(const GptLayout& l, std::size_t first_bucket_bytes, std::size_t bucket_bytes) {
  // Each group's first element, in forward order, and the array's end.
  std::vector<std::size_t> starts = {l.wte};
  for (const auto& b : l.blocks) starts.push_back(b.ln1_w);
  starts.push_back(l.lnf_w);
  starts.push_back(l.total);
  ParamLayout out;
  out.parameters = out.control_offset = l.total;
  out.total = l.total + ParamLayout::kControlSlots;
  std::size_t end = out.total;  // the open bucket's end
  for (int group = int(starts.size()) - 2; group >= 0; --group) {
    const std::size_t begin = starts[std::size_t(group)];
    const std::size_t cap = out.buckets.empty() ? first_bucket_bytes : bucket_bytes;
    if ((end - begin) * sizeof(float) >= cap || group == 0) {
      out.buckets.push_back({begin, end - begin, group});
      end = begin;
    }
  }
  return out;
}

std::vector<ParamRange> gpt_decayed(const GptLayout& l, const GptConfig& c) {
  const std::size_t C = std::size_t(c.width);
  std::vector<ParamRange> ranges = {{l.wte, l.wpe + std::size_t(c.context) * C}};  // wte and wpe, side by side
  for (const auto& b : l.blocks)
    for (const auto& [at, n] : {std::pair{b.qkv_w, 3 * C * C}, std::pair{b.proj_w, C * C}, std::pair{b.fc_w, 4 * C * C},
                                std::pair{b.fc_proj_w, 4 * C * C}})
      ranges.push_back({at, at + n});
  return ranges;
}

std::vector<float> initial_gpt_parameters(const GptConfig& c, std::uint64_t seed) {
  const GptLayout l = gpt_layout(c);
  const std::size_t C = std::size_t(c.width);
  std::vector<float> p(l.total, 0.0f);
  std::mt19937_64 gen(seed);
  const auto normal = [&](std::size_t at, std::size_t n, float std_dev) {
    std::normal_distribution<float> d(0.0f, std_dev);
    for (std::size_t i = 0; i < n; ++i) p[at + i] = d(gen);
  };
  const float residual = 0.02f / std::sqrt(2.0f * float(c.layers));
  normal(l.wte, std::size_t(c.vocab) * C, 0.02f);  // the padded rows stay 0
  normal(l.wpe, std::size_t(c.context) * C, 0.02f);
  for (const auto& b : l.blocks) {
    std::fill_n(p.begin() + std::ptrdiff_t(b.ln1_w), C, 1.0f);
    std::fill_n(p.begin() + std::ptrdiff_t(b.ln2_w), C, 1.0f);
    normal(b.qkv_w, 3 * C * C, 0.02f);
    normal(b.proj_w, C * C, residual);
    normal(b.fc_w, 4 * C * C, 0.02f);
    normal(b.fc_proj_w, 4 * C * C, residual);
  }
  std::fill_n(p.begin() + std::ptrdiff_t(l.lnf_w), C, 1.0f);
  return p;
}

}  // namespace ddp::train
