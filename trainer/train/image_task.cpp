#include "train/image_task.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "data/sampler.hpp"

namespace ddp::train {
namespace {

std::string rate_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// This rank's test rows: rank r scores rows r, r + R, ... (no padding: each row once).
std::vector<int> rank_test_rows(std::size_t rows, int rank, int world) {
  std::vector<int> out;
  for (std::size_t i = std::size_t(rank); i < rows; i += std::size_t(world)) out.push_back(int(i));
  return out;
}

OpsArray<int> upload_ints(Ops& ops, const std::vector<int>& host, std::size_t alloc_at_least) {
  OpsArray<int> out = alloc_ints(ops, std::max(host.size(), alloc_at_least));
  if (!host.empty()) ops.upload_int(out.get(), host.data(), host.size());
  return out;
}

// Owns the data and batch buffers in ops memory, the step's program and the
// epoch's tallies; borrows the model, its optimizer memory and the backends.
class ImageTask final : public TrainingTask {
 public:
  ImageTask(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan, const DataSplits& data,
            Backend& b, Model& model, const OptimizerMemory& optim, const ResumePoint& start, bool resumed,
            MetricsFile* metrics);

  const Schedule& schedule() const override { return schedule_; }
  void begin_epoch(int epoch) override;
  StepWork begin_step(const ResumePoint& at, bool stop_request) override;
  void zero_grad() override { program_.zero_gradients(); }
  void forward(int micro) override { program_.forward(micro); }
  void backward(int micro) override { program_.backward(micro); }
  Status all_reduce() override { return program_.wait_for_allreduce(); }
  void update() override { program_.optimizer_update(); }
  Status end_step() override { return program_.end(); }
  const float* control_slots() const override { return program_.control_slots(); }

  void record(const StepControl& result) override {
    loss_sum_ += result.loss;
    ++loss_steps_;
  }
  void log_steps(long long) override {}  // one line an epoch, with its evaluation
  Status evaluate(bool end_of_epoch, long long global_step) override;
  void report_epoch(int epoch, double seconds, long long global_step) override;
  void report_final(long long global_step) override;

  TrainState state() const override {
    return train_state(plan_.layout.parameters, model_.parameters(), plan_.optimizer, optim_.a.get(),
                       optim_.b.get());
  }
  SnapshotMeta snapshot_meta(const ResumePoint& next) const override;

 private:
  const char* metric_name() const {
    return plan_.spec.loss == LossKind::cross_entropy ? "test_accuracy" : "test_mse";
  }
  void write_metrics(const JsonLine& line) {
    if (metrics_) metrics_->write(line);
  }

  const TrainOptions& o_;
  const WorkerIdentity& id_;
  const RunPlan& plan_;
  const DataSplits& data_;
  Ops& ops_;
  Collectives& comm_;
  Model& model_;
  const OptimizerMemory& optim_;
  const int world_;
  const bool resumed_;
  MetricsFile* const metrics_;
  // The data in ops memory; each rank's share of the epoch, in the sampler's order.
  const OwnedSplit train_d_;
  const OwnedSplit test_d_;
  const SamplerConfig sampler_;
  const std::size_t per_rank_;
  const OpsArray<int> epoch_index_;
  std::vector<int> host_index_;
  const std::vector<int> test_rows_;
  const OpsArray<int> test_index_;
  // The batch buffers, shared by the steps and evaluation.
  const OpsArray<float> x_;
  const OpsArray<int> y_labels_;
  const OpsArray<float> y_targets_;
  const OpsArray<float> eval_acc_;  // evaluation's sum and count
  const Schedule schedule_;
  const OpsArray<int> adam_count_;  // Adam's step count, which Ops::adam increments in ops memory
  StepProgram program_;
  // This epoch's steps, and the run's.
  double loss_sum_ = 0;
  std::size_t loss_steps_ = 0;
  double epoch_samples_ = 0;
  double train_seconds_ = 0;
  double samples_total_ = 0;
  double last_loss_ = std::nan("");
  double test_metric_ = std::nan("");
};

ImageTask::ImageTask(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan, const DataSplits& data,
                     Backend& b, Model& model, const OptimizerMemory& optim, const ResumePoint& start, bool resumed,
                     MetricsFile* metrics)
    : o_(o), id_(id), plan_(plan), data_(data), ops_(*b.ops), comm_(*b.comm), model_(model), optim_(optim),
      world_(id.world_size), resumed_(resumed), metrics_(metrics),
      train_d_(upload_split(ops_, data.train)),
      test_d_(upload_split(ops_, data.test)),
      sampler_{data.train.rows, std::uint32_t(world_), std::uint32_t(id.rank), o.shuffle, o.seed, false},
      per_rank_(distributed_indices(sampler_, 0).size()),
      epoch_index_(alloc_ints(ops_, per_rank_)),
      host_index_(per_rank_),
      test_rows_(rank_test_rows(data.test.rows, id.rank, world_)),
      test_index_(upload_ints(ops_, test_rows_, 1)),
      x_(alloc_floats(ops_, std::size_t(plan.max_batch) * data.train.width)),
      y_labels_(alloc_ints(ops_, std::size_t(plan.max_batch))),
      y_targets_(data.train.target_width > 0 ? alloc_floats(ops_, std::size_t(plan.max_batch) * data.train.target_width)
                                             : OpsArray<float>()),
      eval_acc_(alloc_floats(ops_, 2)),
      schedule_{.epochs = o.epochs,
                .steps_in_epoch = (long long)((per_rank_ + std::size_t(plan.micro) * o.accum_steps - 1) /
                                              (std::size_t(plan.micro) * o.accum_steps))},
      adam_count_(upload_ints(ops_, {start.adam_step}, 1)),
      program_(ops_, comm_, model_, plan.layout, train_d_.view, BatchBuffers{x_.get(), y_labels_.get(), y_targets_.get()},
               optim.grads,
               OptimizerState{optimizer_kind(plan.optimizer), plan.lr, o.momentum, o.beta1, o.beta2, o.eps,
                              optim.a.get(), optim.b.get(), adam_count_.get()},
               StepProgram::Shape{plan.micro, o.accum_steps, 1.0f / float(world_),  // pre-divide, then SUM
                                  o.cuda_graph, std::uint32_t(o.seed * 2654435761ULL + 1)}) {
  if (resumed_ && start.epoch >= o.epochs)
    spdlog::info("the snapshot is from the end of training ({} of {} epochs): nothing left to train; "
                 "use another --snapshot-dir or more --epochs to train further", start.epoch, o.epochs);
  if (o.device == "cuda") spdlog::info("training steps: {}", program_.describe());
}

void ImageTask::begin_epoch(int epoch) {
  const std::vector<std::size_t> indices = distributed_indices(sampler_, std::uint64_t(epoch));
  for (std::size_t i = 0; i < per_rank_; ++i) host_index_[i] = int(indices[i]);
  ops_.upload_int(epoch_index_.get(), host_index_.data(), per_rank_);
  program_.set_lr(plan_.lr_at(epoch));
  loss_sum_ = 0;
  loss_steps_ = 0;
  epoch_samples_ = 0;
}

// The step's rows: the next micro x accumulation ones of this rank's share
// (fewer in an epoch's short last step).
StepWork ImageTask::begin_step(const ResumePoint& at, bool stop_request) {
  const std::size_t rows_per_step = std::size_t(plan_.micro) * o_.accum_steps;
  const std::size_t begin = std::size_t(at.step_in_epoch) * rows_per_step;
  const std::size_t step_rows = std::min(per_rank_ - begin, rows_per_step);
  epoch_samples_ += double(step_rows) * world_;
  return program_.begin(epoch_index_.get() + begin, step_rows, stop_request, at.global_step);
}

// The test split's accuracy (classifier) or MSE, reduced over ranks.
Status ImageTask::evaluate(bool, long long) {
  const ModelSpec& spec = plan_.spec;
  const DeviceSplit& test = test_d_.view;
  float* x = x_.get();
  float* eval_acc = eval_acc_.get();
  ops_.fill(eval_acc, 0.0f, 2);
  for (std::size_t begin = 0; begin < test_rows_.size(); begin += std::size_t(plan_.eval_batch)) {
    const int rows = int(std::min<std::size_t>(plan_.eval_batch, test_rows_.size() - begin));
    const int* index = test_index_.get() + begin;
    ops_.gather_rows(test.features, index, rows, test.width, x);
    if (test.labels) ops_.gather_labels(test.labels, index, rows, y_labels_.get());
    if (test.targets) ops_.gather_rows(test.targets, index, rows, test.target_width, y_targets_.get());
    model_.forward(x, rows);
    if (spec.loss == LossKind::cross_entropy)
      ops_.count_correct(model_.output(), y_labels_.get(), rows, spec.dims.back(), eval_acc);
    else
      ops_.sum_squared_error(model_.output(), spec.kind == ModelKind::autoencoder ? x : y_targets_.get(),
                             std::size_t(rows) * spec.dims.back(), eval_acc);
  }
  float counts[2];
  ops_.download(counts, eval_acc, 1);
  counts[1] = float(test_rows_.size());
  ops_.upload(eval_acc, counts, 2);
  if (auto st = comm_.allreduce_sum(eval_acc, 2); !st) return fail(st.error());
  ops_.download(counts, eval_acc, 2);
  test_metric_ = spec.loss == LossKind::cross_entropy ? counts[0] / counts[1]
                                                      : counts[0] / (counts[1] * spec.dims.back());
  return Ok{};
}

void ImageTask::report_epoch(int epoch, double seconds, long long global_step) {
  train_seconds_ += seconds;
  samples_total_ += epoch_samples_;
  last_loss_ = loss_steps_ ? loss_sum_ / double(loss_steps_) : std::nan("");
  const double rate = epoch_samples_ / seconds;
  const double eta = (o_.epochs - epoch - 1) * seconds;
  spdlog::info("epoch {}/{}: loss {:.4f}, {} {:.4f}, {} samples/s, {:.2f} s, ETA {:.0f} s", epoch + 1, o_.epochs,
               last_loss_, metric_name(), test_metric_, rate_text(rate), seconds, eta);
  write_metrics(JsonLine()
                    .add("event", std::string("epoch"))
                    .add("epoch", (long long)(epoch + 1))
                    .add("attempt", (long long)id_.attempt)
                    .add("global_step", global_step)
                    .add("train_loss", last_loss_)
                    .add(metric_name(), test_metric_)
                    .add("samples_per_second", rate)
                    .add("seconds", seconds));
}

void ImageTask::report_final(long long global_step) {
  const double rate = train_seconds_ > 0 ? samples_total_ / train_seconds_ : 0;
  // No epoch trained in this run (resumed at the end): no loss to report.
  const std::string loss = std::isnan(last_loss_) ? "n/a (no step in this run)" : fmt::format("{:.4f}", last_loss_);
  spdlog::info("done: {} epochs on {} rank(s), {:.2f} s training, {} samples/s, final loss {}, {} {:.4f}", o_.epochs,
               world_, train_seconds_, rate_text(rate), loss,
               plan_.spec.loss == LossKind::cross_entropy ? "test accuracy" : "test MSE", test_metric_);
  write_metrics(JsonLine()
                    .add("event", std::string("final"))
                    .add("world_size", (long long)world_)
                    .add("epochs", (long long)o_.epochs)
                    .add("model", plan_.spec.describe())
                    .add("attempt", (long long)id_.attempt)
                    .add("resumed", (long long)resumed_)
                    .add("global_step", global_step)
                    .add("train_seconds", train_seconds_)
                    .add("samples_per_second", rate)
                    .add("final_train_loss", last_loss_)
                    .add(metric_name(), test_metric_));
}

SnapshotMeta ImageTask::snapshot_meta(const ResumePoint& next) const {
  return SnapshotMeta{.model = plan_.spec.describe(),
                      .optimizer = plan_.optimizer,
                      .lr = plan_.lr,
                      .batch_size = o_.batch_size,
                      .accum_steps = o_.accum_steps,
                      .world_size = world_,
                      .position = next,
                      .sampler_seed = o_.seed,
                      .shuffle = o_.shuffle,
                      .data = data_.train.origin};
}

}  // namespace

std::unique_ptr<TrainingTask> make_image_task(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan,
                                              const DataSplits& data, Backend& b, Model& model,
                                              const OptimizerMemory& optim, const ResumePoint& start, bool resumed,
                                              MetricsFile* metrics) {
  return std::make_unique<ImageTask>(o, id, plan, data, b, model, optim, start, resumed, metrics);
}

}  // namespace ddp::train
