// The training loop, one for every model (train_loop() in loop.cpp, read top
// to bottom), and what it is given: a TrainingTask, the pieces in which the
// models differ. The image models' (image_task.cpp: mlp, ae, linear, cnn)
// count epochs over IDX data in the sampler's order; the language model's
// (gpt_task.cpp) counts optimizer steps, with a warm-up and cosine rate,
// gradient clipping and a held-out loss.
#pragma once

#include "ddp/base/result.hpp"
#include "model/ops.hpp"
#include "process_group/bootstrap.hpp"
#include "train/options.hpp"
#include "train/snapshot_meta.hpp"
#include "train/snapshot_state.hpp"
#include "train/step.hpp"

namespace ddp::train {

// When things happen. Training is `epochs` epochs of `steps_in_epoch` steps;
// at each epoch's end the loop evaluates, reports and saves. The GPT counts
// steps, not passes over its data: its run is one epoch of --steps steps.
struct Schedule {
  int epochs = 1;
  long long steps_in_epoch = 0;
  long long eval_every = 0;  // global steps between evaluations inside an epoch (0: only at its end)
  long long log_every = 0;   // global steps between progress lines, and one at the epoch's end (0: none)
  // How many steps late the host reads a step's loss and stop flag (0 or 1:
  // StepReadback). One lets a GPU queue the next step before the host waits.
  int result_lag = 1;
  const char* epoch_end = "end of epoch";  // the snapshot at an epoch's end, as the log names it
};

// A model's part of training: its data, its step's pieces, its measures and
// reports, and what its snapshots hold.
class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  virtual const Schedule& schedule() const = 0;
  virtual void begin_epoch(int epoch) = 0;  // the epoch's order of samples and learning rate

  // One optimizer step, in the order the loop calls the pieces. `at`: the
  // step about to run; `stop_request`: this rank asks every rank to stop.
  virtual StepWork begin_step(const ResumePoint& at, bool stop_request) = 0;
  virtual void zero_grad() = 0;
  virtual void forward(int micro) = 0;   // micro-batch `micro` through the model, and its loss
  virtual void backward(int micro) = 0;  // the last micro-batch's starts each bucket's all-reduce as it completes
  virtual Status all_reduce() = 0;       // waits for every bucket's
  virtual void update() = 0;             // the optimizer
  virtual Status end_step() = 0;
  virtual const float* control_slots() const = 0;  // the reduced loss and stop flag (ParamLayout), ops memory

  // What the loop measures and reports, at its points; `global_step`: steps
  // taken so far.
  virtual void record(const StepControl& result) = 0;  // a step's loss, as the host reads it
  virtual void log_steps(long long global_step) = 0;   // the line every Schedule::log_every steps
  virtual Status evaluate(bool end_of_epoch, long long global_step) = 0;
  virtual void report_epoch(int epoch, double seconds, long long global_step) = 0;
  virtual void report_final(long long global_step) = 0;

  // What a snapshot holds: the state, and the metadata of a snapshot that
  // resumes at `next`.
  virtual TrainState state() const = 0;
  virtual SnapshotMeta snapshot_meta(const ResumePoint& next) const = 0;
};

// Trains `task` from `start` (a snapshot's resume point, or the beginning) to
// the end of its schedule, or until SIGUSR1 with --on-preempt exit; then the
// final report and --dump-params. An error: a step or an evaluation failed.
Status train_loop(TrainingTask& task, const TrainOptions& o, const WorkerIdentity& id, Ops& ops,
                  const ResumePoint& start);

}  // namespace ddp::train
