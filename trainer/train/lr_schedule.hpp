// The language model's learning rate and gradient clipping (--model gpt):
// pure, unit-tested, the same on every rank and after a resume (functions of
// the global step and of the all-reduced gradient).
#pragma once

#include <cstdint>

namespace ddp::train {

// Linear warm-up over the first `warmup` steps (step s gets max x (s + 1) /
// warmup), then a cosine from max down to min at step `total`, min after it.
struct WarmupCosine {
  float max_lr = 6e-4f, min_lr = 6e-5f;
  std::int64_t warmup = 0, total = 1;
  float at(std::int64_t step) const;
};

// PyTorch's clip_grad_norm_: the factor the gradients are multiplied by so
// that their global L2 norm is at most `max_norm` (1 when it already is, or
// when max_norm <= 0: no clipping).
float clip_factor(double grad_norm, float max_norm);

}  // namespace ddp::train
