// The image models' part of training (--model mlp, ae, linear, cnn) for the
// loop (loop.hpp): epochs over the training rows in DistributedSampler's
// order, the rate times --lr-gamma after each; each step's device work in a
// StepProgram (step.hpp), its results read one step late; the test split's
// accuracy or MSE at each epoch's end; one log line and metrics record an
// epoch, and the final ones.
#pragma once

#include <memory>

#include "data/dataset.hpp"
#include "model/model.hpp"
#include "process_group/bootstrap.hpp"
#include "train/loop.hpp"
#include "train/metrics.hpp"
#include "train/ops_memory.hpp"
#include "train/options.hpp"
#include "train/setup.hpp"

namespace ddp::train {

// Borrows everything it is given for its lifetime; `start`: where the run
// begins (a snapshot's point, or the beginning); `resumed`: from a snapshot.
// `metrics`: rank 0's --metrics file, or null.
std::unique_ptr<TrainingTask> make_image_task(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan,
                                              const DataSplits& data, Backend& b, Model& model,
                                              const OptimizerMemory& optim, const ResumePoint& start, bool resumed,
                                              MetricsFile* metrics);

}  // namespace ddp::train
