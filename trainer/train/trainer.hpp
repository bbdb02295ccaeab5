// The training run, top to bottom: identity, data, the run's plan, bootstrap
// and backends (setup.hpp), model, resume (resume.hpp), then the epochs: the
// step loop with overlapped bucket all-reduce, evaluation, snapshots,
// metrics. Returns the process exit code.
#pragma once

#include "train/options.hpp"

namespace ddp::train {

int run_training(const TrainOptions& options);

}  // namespace ddp::train
