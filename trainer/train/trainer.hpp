// The training run, top to bottom: identity, data, the run's plan, bootstrap
// and backends (setup.hpp), model, resume (resume.hpp), then the training
// loop (loop.hpp) with the model's task: the image models' (image_task.hpp)
// or the GPT's (gpt_trainer.hpp, gpt_task.hpp). Returns the process exit
// code.
#pragma once

#include "train/options.hpp"

namespace ddp::train {

int run_training(const TrainOptions& options);

}  // namespace ddp::train
