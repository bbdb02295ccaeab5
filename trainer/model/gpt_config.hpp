// The GPT-2-class model's shape (--model gpt) and where each of its
// parameters lives in the one flat array DDP reduces: pure, unit-tested.
//
// Order in the array: wte [Vp, C] (the token embedding, tied to the output
// head), wpe [context, C], then each block's ln1 weight and bias [C], QKV
// weight [3C, C] and bias [3C], attention projection [C, C] and [C], ln2
// [C] [C], MLP up [4C, C] and [4C], MLP down [C, 4C] and [C]; then the final
// LayerNorm's weight and bias [C]. Linear weights in PyTorch's [out, in].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "model/layout.hpp"

namespace ddp::train {

struct GptConfig {
  int layers = 2, heads = 4, width = 128, context = 64;
  int vocab = 256;  // tokens the data may hold
  int padded_vocab =
      256;  // the embedding's rows: vocab rounded up to a multiple of 64 (kernels); the extra rows never win
  std::string describe() const;  // "gpt 2 layers, 4 heads, width 128, context 64, vocabulary 256 (padded 256)"
};

// "gpt2-124m" (12 layers, 12 heads, width 768, context 1024, vocabulary
// 50,257 padded to 50,304) or "small" (2, 4, 128, 64, 256: the tests' and the
// CPU's), each shape then overridable; checked: heads divide the width, the
// vocabulary fits a token file's uint16.
Result<GptConfig> gpt_config(const std::string& preset, int layers, int heads, int width, int context, int vocab);

// One block's tensors, by name, each an offset into the flat array.
struct GptBlockOffsets {
  std::size_t ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc_proj_w, fc_proj_b;
};

struct GptLayout {
  std::size_t wte = 0, wpe = 0;
  std::vector<GptBlockOffsets> blocks;
  std::size_t lnf_w = 0, lnf_b = 0;
  std::size_t total = 0;  // parameters
};
GptLayout gpt_layout(const GptConfig& c);

// The all-reduce buckets over gpt_layout()'s flat array, in launch order:
// groups of parameters (0: wte and wpe; 1 to layers: the blocks; layers + 1:
// the final LayerNorm) gathered from the array's end, each bucket closed
// once it reaches its cap (the first's about 1 MiB, the others' about 25, as
// PyTorch's Reducer); a bucket's ready_after_layer is its lowest group. The
// step's loss and stop flag (ParamLayout's control slots, after the
// parameters) ride with the first bucket, which ends where they begin.
ParamLayout gpt_param_layout(const GptLayout& l, std::size_t first_bucket_bytes, std::size_t bucket_bytes);

// The parameters AdamW decays (nanoGPT's rule: every matrix and embedding;
// no bias, no LayerNorm), as [begin, end) ranges of the flat array.
struct ParamRange {
  std::size_t begin = 0, end = 0;
  bool operator==(const ParamRange&) const = default;
};
std::vector<ParamRange> gpt_decayed(const GptLayout& l, const GptConfig& c);

// GPT-2's initialisation: weights ~ N(0, 0.02), the two projections into the
// residual stream scaled by 1/sqrt(2 x layers), biases 0, LayerNorms 1 and 0;
// the padded rows of wte 0. The same seed gives the same parameters.
std::vector<float> initial_gpt_parameters(const GptConfig& c, std::uint64_t seed);

}  // namespace ddp::train
