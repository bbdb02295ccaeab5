// A run's set-up, before its first step: who this process is, the data, the
// plan that the options and the data decide (model, optimizer, batch split,
// bucket layout), the rendezvous with the other ranks, and the compute and
// communication backends. Errors are messages that name the fix.
#pragma once

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "data/dataset.hpp"
#include "ddp/base/result.hpp"
#include "gpu_backend.hpp"
#include "model/layout.hpp"
#include "model/model.hpp"
#include "model/ops.hpp"
#include "process_group/bootstrap.hpp"
#include "process_group/collectives.hpp"
#include "train/metrics.hpp"
#include "train/options.hpp"

namespace ddp::train {

// The worker environment (RANK, WORLD_SIZE, ...); sets up logging for it.
Result<WorkerIdentity> start_worker(const TrainOptions& o);

// --data: an IDX directory, or synthetic data for --model.
Result<DataSplits> load_data(const TrainOptions& o);

struct RunPlan {
  ModelSpec spec;
  std::string optimizer;  // sgd | adam | adadelta
  float lr = 0;           // the first epoch's
  float lr_gamma = 1;     // the rate is multiplied by it after each epoch (PyTorch's StepLR, step 1)
  float lr_at(int epoch) const { return lr * std::pow(lr_gamma, float(epoch)); }
  int micro = 0;       // rows per rank per micro-batch
  int eval_batch = 0;  // rows per rank per evaluation batch
  int max_batch = 0;   // rows of the batch buffers
  ParamLayout layout;
  std::string fingerprint;  // what every rank must share (bootstrap() compares it)
};
Result<RunPlan> plan_run(const TrainOptions& o, int world, const Dataset& train);

// --precision for this run: bf16 for --model gpt on --device cuda (auto, or
// asked), fp32 otherwise; an error for bf16 anywhere else (the CPU path and
// the other models' kernels are fp32).
Result<MatmulPrecision> matmul_precision(const TrainOptions& o);

// The other ranks (nothing for a process on its own).
Result<std::optional<Session>> join_ranks(const TrainOptions& o, const WorkerIdentity& id,
                                          const std::string& fingerprint);

struct Backend {
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Collectives> comm;  // declared after ops: destroyed before it
};
// --device cpu (OpenBLAS, Gloo or local) or cuda (cuBLAS, NCCL; needs `session`).
Result<Backend> make_backend(const TrainOptions& o, const WorkerIdentity& id, Session* session,
                             const ParamLayout& layout);

// Rank 0's --metrics file (null elsewhere, or without --metrics): appended to
// by a restarted or resumed run, truncated by a fresh one; a file that cannot
// be opened is a warning.
std::unique_ptr<MetricsFile> open_metrics(const TrainOptions& o, const WorkerIdentity& id, bool resumed);

}  // namespace ddp::train
