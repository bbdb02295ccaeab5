#include <string>

#include "train/gpt_trainer.hpp"
#include "train/setup.hpp"

namespace ddp::train {

Result<GptPlan> plan_gpt_run(const TrainOptions& o, int world, const TokenHeader& train) {
  if (auto precision = matmul_precision(o); !precision) return fail(precision.error());
  if (o.device != "cpu" && !o.unchecked_kernels)
    return fail(
        "--model gpt runs on --device cpu in this release: its CUDA kernels are built but not yet "
        "checked on a GPU (tests/gpu: the kit's op parity row)");
  // The vocabulary: --gpt-vocab, else the preset's (gpt2-124m: GPT-2's), else the data's.
  const int vocab = o.gpt_vocab > 0 ? o.gpt_vocab : o.gpt_preset == "gpt2-124m" ? 0 : int(train.vocab);
  auto config = gpt_config(o.gpt_preset, o.gpt_layers, o.gpt_heads, o.gpt_width, o.gpt_context, vocab);
  if (!config) return fail(config.error());
  if (train.vocab > std::uint32_t(config->vocab))
    return fail("the token file's vocabulary (" + std::to_string(train.vocab) + ", tokenizer " + train.tokenizer +
                ") is larger than the model's (" + std::to_string(config->vocab) +
                "): leave --gpt-vocab out, or give at least " + std::to_string(train.vocab));
  GptPlan p;
  p.config = *config;
  p.batch_size = o.batch_size_given ? o.batch_size : 16;
  if (o.accum_steps <= 0 || p.batch_size % (world * o.accum_steps) != 0)
    return fail("--batch-size " + std::to_string(p.batch_size) + " is the global batch (sequences); it must split " +
                "evenly over " + std::to_string(world) + " rank(s) x " + std::to_string(o.accum_steps) +
                " accumulation step(s): use a multiple of " + std::to_string(world * o.accum_steps));
  if (o.steps <= 0) return fail("--steps " + std::to_string(o.steps) + ": give at least 1 optimizer step");
  const long long warmup = o.warmup_steps >= 0 ? o.warmup_steps : o.steps / 10;
  if (warmup > o.steps)
    return fail("--warmup-steps " + std::to_string(warmup) + " is more than --steps " + std::to_string(o.steps));
  RunPlan& r = p.run;
  r.spec.kind = ModelKind::gpt;
  r.spec.gpt = p.config;
  r.optimizer = "adamw";
  // nanoGPT's GPT-2 rate; the small model learns faster at 1e-3.
  r.lr = o.lr > 0 ? o.lr : o.gpt_preset == "gpt2-124m" ? 6e-4f : 1e-3f;
  p.schedule = WarmupCosine{r.lr, r.lr * o.min_lr_ratio, warmup, o.steps};
  r.micro = r.eval_batch = r.max_batch = p.batch_size / (world * o.accum_steps);
  r.layout = gpt_param_layout(gpt_layout(p.config), std::size_t(o.first_bucket_mb * 1024 * 1024),
                              std::size_t(o.bucket_mb * 1024 * 1024));
  r.fingerprint = p.config.describe() + ", adamw lr " + std::to_string(r.lr) + " over " + std::to_string(o.steps) +
                  " steps, global batch " + std::to_string(p.batch_size) + ", " + std::to_string(train.count) +
                  " training tokens, device " + o.device + (o.shared_memory ? "" : ", --no-shm");
  return p;
}

}  // namespace ddp::train
