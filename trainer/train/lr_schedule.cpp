#include "train/lr_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::train {

float WarmupCosine::at(std::int64_t step) const {
  if (step < warmup) return max_lr * float(step + 1) / float(warmup);
  if (step >= total) return min_lr;
  const double progress = double(step - warmup) / double(std::max<std::int64_t>(1, total - warmup));
  return float(min_lr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (max_lr - min_lr));
}

float clip_factor(double grad_norm, float max_norm) {
  if (max_norm <= 0) return 1.0f;
  return float(std::min(1.0, double(max_norm) / (grad_norm + 1e-6)));
}

}  // namespace ddp::train
