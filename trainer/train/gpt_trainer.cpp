#include "train/gpt_trainer.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "data/token_windows.hpp"
#include "model/gpt.hpp"
#include "train/gpt_task.hpp"
#include "train/loop.hpp"
#include "train/metrics.hpp"
#include "train/resume.hpp"

namespace ddp::train {
namespace {

// --data random: uniform over the model's vocabulary (the one plan_gpt_run
// takes from --gpt-vocab or the preset), from --seed.
Result<TokenStream> random_stream(const TrainOptions& o) {
  auto config = gpt_config(o.gpt_preset, o.gpt_layers, o.gpt_heads, o.gpt_width, o.gpt_context, o.gpt_vocab);
  if (!config) return fail(config.error());
  TokenStream s;
  s.random = random_tokens(kRandomTokens, std::uint32_t(config->vocab), o.seed);
  s.random_header = {1, std::uint32_t(config->vocab), kRandomTokens, "random"};
  return s;
}

Result<TokenData> open_token_files(const TrainOptions& o) {
  if (o.data == "synthetic" || o.data.empty())
    return fail(
        "--model gpt trains on a token file: --data FILE.train.tok (ddp-tokenize TEXT --out FILE writes "
        "one, and FILE.val.tok for --eval-data), or on --data random (throughput only)");
  TokenData d;
  if (o.data == "random") {
    auto random = random_stream(o);
    if (!random) return fail(random.error());
    d.train = std::move(random).value();
  } else {
    auto train = TokenFile::open(o.data);
    if (!train) return fail("--data: " + train.error());
    d.train.file = std::move(train).value();
  }
  if (o.eval_data.empty()) return d;
  auto held = TokenFile::open(o.eval_data);
  if (!held) return fail("--eval-data: " + held.error());
  if (held->header().tokenizer != d.train.header().tokenizer)
    return fail("--eval-data " + o.eval_data + " was tokenized by " + held->header().tokenizer + ", --data " +
                d.train.path() + " by " + d.train.header().tokenizer + ": give both from one ddp-tokenize run");
  d.held_out = std::move(held).value();
  return d;
}

// GPT-2's initialisation from --seed, or --init-params's file.
Result<std::vector<float>> initial_parameters_of(const GptPlan& plan, const TrainOptions& o) {
  const std::size_t n = plan.run.layout.parameters;
  if (o.init_params.empty()) return initial_gpt_parameters(plan.config, o.seed);
  std::ifstream in(o.init_params, std::ios::binary | std::ios::ate);
  if (!in) return fail("--init-params " + o.init_params + ": cannot read it");
  if (std::size_t(in.tellg()) != n * sizeof(float))
    return fail("--init-params " + o.init_params + ": " + std::to_string(std::size_t(in.tellg())) + " bytes, but " +
                plan.config.describe() + " has " + std::to_string(n) + " float32 parameters");
  std::vector<float> init(n);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(init.data()), std::streamsize(n * sizeof(float))))
    return fail("--init-params " + o.init_params + ": read failed");
  return init;
}

void log_gpt_start(const TrainOptions& o, const GptPlan& plan, const TokenData& data, const TokenWindows& windows,
                   const Backend& b, int world) {
  spdlog::info(
      "{} on {} rank(s) [{}], adamw lr {} (warm-up {} steps, cosine to {:.2e} at step {}), global batch {} "
      "sequences ({} per rank x {} accumulation step(s)), {} parameters",
      plan.config.describe(), world, b.comm->name(), plan.run.lr, plan.schedule.warmup, plan.schedule.min_lr, o.steps,
      plan.batch_size, plan.run.micro, o.accum_steps, plan.run.layout.parameters);
  spdlog::info("data: {} ({} tokens, {} windows{}); compute: {}", data.train.path(), data.train.header().count,
               windows.windows(), data.held_out ? ", held out: " + data.held_out->path() : std::string(),
               b.ops->name());
  spdlog::debug("{}", describe_buckets(plan.run.layout));
}

}  // namespace

int run_gpt_training(const TrainOptions& o, const WorkerIdentity& id) {
  auto die = [&](const std::string& message) {
    std::fprintf(stderr, "ddp-train: error (rank %d): %s\n", id.rank, message.c_str());
    return 1;
  };
  // Each step borrows from the ones before it, and locals go in reverse
  // order: the task before the backends, the backends before the session
  // whose store they use.
  auto data = open_token_files(o);
  if (!data) return die(data.error());
  auto planned = plan_gpt_run(o, id.world_size, data->train.header());
  if (!planned) return die(planned.error());
  const GptPlan& plan = *planned;
  auto windows = TokenWindows::plan(data->train.header().count, plan.config.context, plan.batch_size);
  if (!windows) return die("--data " + o.data + ": " + windows.error());
  auto joined = join_ranks(o, id, plan.run.fingerprint);
  if (!joined) return die(joined.error());
  std::optional<Session> session = std::move(joined).value();
  auto made = make_backend(o, id, session ? &*session : nullptr, plan.run.layout);
  if (!made) return die(made.error());
  Backend backend = std::move(made).value();
  log_gpt_start(o, plan, *data, *windows, backend, id.world_size);

  auto init = initial_parameters_of(plan, o);
  if (!init) return die(init.error());
  const std::size_t n = plan.run.layout.parameters;
  Ops& ops = *backend.ops;
  GptState state{alloc_floats(ops, n), alloc_floats(ops, n), alloc_floats(ops, n), n};
  ops.upload(state.params.get(), init->data(), n);
  const TrainState arrays = train_state(n, state.params.get(), plan.run.optimizer, state.m.get(), state.v.get());
  auto start = start_from_rank_0(o, id, plan.run, plan.batch_size, session ? &*session : nullptr, backend, arrays);
  if (!start) return die(start.error());
  const ResumePoint from = gpt_position(start->value_or(ResumePoint{}));
  const auto metrics = open_metrics(o, id, start->has_value());
  const auto task = make_gpt_task(o, id, plan, *data, *windows, backend, std::move(state), from, start->has_value(),
                                  metrics.get());
  if (auto st = train_loop(*task, o, id, ops, from); !st) return die(st.error());
  return 0;
}

}  // namespace ddp::train
