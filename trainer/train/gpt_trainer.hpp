// The language model's training run (--model gpt, the CPU in fp32), set up
// top to bottom as the image models' (trainer.cpp): the token files, the
// run's plan, the ranks and backends, the parameters, resume; then the
// training loop (loop.hpp) with the GPT's task (gpt_task.hpp). The schedule
// counts optimizer steps (--steps), not epochs.
#pragma once

#include "data/token_file.hpp"
#include "process_group/bootstrap.hpp"
#include "train/lr_schedule.hpp"
#include "train/options.hpp"
#include "train/setup.hpp"

namespace ddp::train {

struct GptPlan {
  RunPlan run;  // spec (kind gpt), "adamw", the peak rate, micro, the buckets, the fingerprint
  GptConfig config;
  WarmupCosine schedule;
  int batch_size = 0;  // global sequences per step
};

// Pure: the options, the world and the training file's header decide the
// run; errors name the option to change.
Result<GptPlan> plan_gpt_run(const TrainOptions& o, int world, const TokenHeader& train);

// `id` from start_worker(); the preemption handler installed. The exit code.
int run_gpt_training(const TrainOptions& o, const WorkerIdentity& id);

}  // namespace ddp::train
