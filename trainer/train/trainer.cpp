#include "train/trainer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "data/sampler.hpp"
#include "ddp/wire/progress_file.hpp"
#include "model/model.hpp"
#include "train/gpt_trainer.hpp"
#include "train/metrics.hpp"
#include "train/ops_memory.hpp"
#include "train/resume.hpp"
#include "train/setup.hpp"
#include "train/snapshot.hpp"
#include "train/snapshot_meta.hpp"
#include "train/step.hpp"
#include "train/worker_events.hpp"

namespace ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string fmt_rate(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// The start-up log: the model, the ranks, the data and the buckets.
void log_start(const TrainOptions& o, const RunPlan& plan, const DataSplits& data, const Backend& b, int world) {
  spdlog::info("{} on {} rank(s) [{}], {}, lr {}, global batch {} ({} per rank x {} accumulation step(s))",
               plan.spec.describe(), world, b.comm->name(), plan.optimizer, plan.lr, o.batch_size, plan.micro,
               o.accum_steps);
  spdlog::info("data: {} ({} train rows, {} test rows); compute: {}", data.train.origin, data.train.rows,
               data.test.rows, b.ops->name());
  spdlog::debug("{}", describe_buckets(plan.layout));
}

// PyTorch's initialisation from --seed, or --init-params's file;
// start_from_rank_0() then gives every rank rank 0's.
Status upload_initial_parameters(Ops& ops, Model& model, const RunPlan& plan, const TrainOptions& o) {
  std::vector<float> init;
  if (o.init_params.empty()) {
    init = initial_parameters(plan.spec, plan.layout, o.seed);
  } else {
    std::ifstream in(o.init_params, std::ios::binary | std::ios::ate);
    if (!in) return fail("--init-params " + o.init_params + ": cannot read it");
    const auto bytes = std::size_t(in.tellg());
    if (bytes != plan.layout.parameters * sizeof(float))
      return fail("--init-params " + o.init_params + ": " + std::to_string(bytes) + " bytes, but " +
                  plan.spec.describe() + " has " + std::to_string(plan.layout.parameters) +
                  " float32 parameters (the layout --dump-params writes)");
    init.resize(plan.layout.parameters);
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(init.data()), std::streamsize(bytes)))
      return fail("--init-params " + o.init_params + ": read failed");
  }
  ops.upload(model.parameters(), init.data(), plan.layout.parameters);
  return Ok{};
}

std::unique_ptr<MetricsFile> open_metrics(const TrainOptions& o, const WorkerIdentity& id, bool resumed) {
  if (id.rank != 0 || o.metrics.empty()) return nullptr;
  auto file = std::make_unique<MetricsFile>(o.metrics, id.attempt > 0 || resumed);
  if (!file->open()) spdlog::warn("warning: {}; no metrics are written", file->error());
  return file;
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

// One epoch's running sums, for its log line and metrics record.
struct EpochTally {
  Clock::time_point start;
  double loss_sum = 0;
  std::size_t loss_steps = 0;
  double samples = 0;
};

// Training once set up: the epochs and their steps, evaluation, snapshots and
// the reports. Owns the batch and evaluation buffers and the run's counters;
// the model, its optimizer memory and the backends it borrows.
class Trainer {
 public:
  Trainer(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan, const DataSplits& data, Backend& b,
          Model& model, const OptimizerMemory& optim, const std::optional<ResumePoint>& start);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  Status run();  // every epoch left, then the final report

 private:
  Status train_epoch(int epoch, EpochTally& tally);
  Status train_step(int epoch, std::size_t step, EpochTally& tally);
  void on_step_result(const StepControl& result, int next_epoch, long long next_step, EpochTally& tally);
  Result<double> evaluate();
  void report_epoch(int epoch, const EpochTally& tally, double seconds);
  Status report_final();
  Snapshot snapshot_of(int next_epoch, long long next_step_in_epoch);
  void save_snapshot(int next_epoch, long long next_step_in_epoch, const char* why);
  void write_metrics(const JsonLine& line) {
    if (metrics_) metrics_->write(line);
  }
  const char* metric_name() const {
    return plan_.spec.loss == LossKind::cross_entropy ? "test_accuracy" : "test_mse";
  }

  const TrainOptions& o_;
  const WorkerIdentity& id_;
  const RunPlan& plan_;
  const DataSplits& data_;
  Ops& ops_;
  Collectives& comm_;
  Model& model_;
  const OptimizerMemory& optim_;
  const bool lead_;
  const int world_;
  const bool resumed_;
  const ResumePoint start_;
  std::unique_ptr<MetricsFile> metrics_;  // rank 0 with --metrics
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
  const std::size_t steps_per_epoch_;
  long long global_step_;
  // Adam's step count lives in ops memory (Ops::adam); the host keeps its own
  // copy (adam_step_) for snapshots, and both count every step.
  int adam_step_;
  const OpsArray<int> adam_count_;
  StepProgram program_;
  StepReadback readback_;
  const ProgressWriter progress_;  // DDP_PROGRESS_FILE, for the agent's hang watch
  int snapshots_written_ = 0;
  bool stop_ = false;  // SIGUSR1 with --on-preempt exit: stop after the snapshot
  double train_seconds_ = 0;
  double samples_total_ = 0;
  double last_loss_ = std::nan("");
  double test_metric_ = std::nan("");
};

Trainer::Trainer(const TrainOptions& o, const WorkerIdentity& id, const RunPlan& plan, const DataSplits& data,
                 Backend& b, Model& model, const OptimizerMemory& optim, const std::optional<ResumePoint>& start)
    : o_(o), id_(id), plan_(plan), data_(data), ops_(*b.ops), comm_(*b.comm), model_(model), optim_(optim),
      lead_(id.rank == 0), world_(id.world_size), resumed_(start.has_value()), start_(start.value_or(ResumePoint{})),
      metrics_(open_metrics(o, id, resumed_)),
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
      steps_per_epoch_((per_rank_ + std::size_t(plan.micro) * o.accum_steps - 1) /
                       (std::size_t(plan.micro) * o.accum_steps)),
      global_step_(start_.global_step),
      adam_step_(start_.adam_step),
      adam_count_(upload_ints(ops_, {adam_step_}, 1)),
      program_(ops_, comm_, model_, plan.layout, train_d_.view, BatchBuffers{x_.get(), y_labels_.get(), y_targets_.get()},
               optim.grads,
               OptimizerState{optimizer_kind(plan.optimizer), plan.lr, o.momentum, o.beta1, o.beta2, o.eps,
                              optim.a.get(), optim.b.get(), adam_count_.get()},
               StepProgram::Shape{plan.micro, o.accum_steps, 1.0f / float(world_),  // pre-divide, then SUM
                                  o.cuda_graph, std::uint32_t(o.seed * 2654435761ULL + 1)}),
      readback_(ops_, program_.control_slots()),
      progress_(env_or_empty("DDP_PROGRESS_FILE")) {
  if (resumed_ && start_.epoch >= o.epochs)
    spdlog::info("the snapshot is from the end of training ({} of {} epochs): nothing left to train; "
                 "use another --snapshot-dir or more --epochs to train further", start_.epoch, o.epochs);
  if (o.device == "cuda") spdlog::info("training steps: {}", program_.describe());
}

Status Trainer::run() {
  for (int epoch = start_.epoch; epoch < o_.epochs && !stop_; ++epoch) {
    EpochTally tally;
    if (auto st = train_epoch(epoch, tally); !st) return st;
    if (stop_) break;
    const double epoch_seconds = seconds_since(tally.start);
    train_seconds_ += epoch_seconds;
    samples_total_ += tally.samples;
    last_loss_ = tally.loss_steps ? tally.loss_sum / double(tally.loss_steps) : std::nan("");
    auto metric = evaluate();
    if (!metric) return fail(metric.error());
    test_metric_ = *metric;
    report_epoch(epoch, tally, epoch_seconds);
    if (o_.save_every > 0 && ((epoch + 1) % o_.save_every == 0 || epoch + 1 == o_.epochs))
      save_snapshot(epoch + 1, 0, "end of epoch");
  }
  if (stop_) return Ok{};
  // Resumed from the end of training (a requeue that came after the last
  // step): nothing to train, but the model it ends with is still measured.
  if (resumed_ && start_.epoch >= o_.epochs) {
    auto metric = evaluate();
    if (!metric) return fail(metric.error());
    test_metric_ = *metric;
  }
  return report_final();
}

Status Trainer::train_epoch(int epoch, EpochTally& tally) {
  const std::vector<std::size_t> indices = distributed_indices(sampler_, std::uint64_t(epoch));
  for (std::size_t i = 0; i < per_rank_; ++i) host_index_[i] = int(indices[i]);
  ops_.upload_int(epoch_index_.get(), host_index_.data(), per_rank_);
  program_.set_lr(plan_.lr_at(epoch));
  tally.start = Clock::now();
  const std::size_t first_step = epoch == start_.epoch ? std::size_t(start_.step_in_epoch) : 0;
  for (std::size_t step = first_step; step < steps_per_epoch_ && !stop_; ++step)
    if (auto st = train_step(epoch, step, tally); !st) return st;
  if (auto newest = readback_.drain()) on_step_result(*newest, epoch + 1, 0, tally);
  return Ok{};
}

// What the host learns from a step arrives one step late (StepReadback): a
// stop request seen after step s is acted on after step s + 1, on every rank
// alike, at the position the loop has reached then.
Status Trainer::train_step(int epoch, std::size_t step, EpochTally& tally) {
  inject_faults(o_, id_, global_step_);
  // Progress is starting a step: a rank that never starts the step the
  // others wait in is behind them (ddp-train has no stack for the agent).
  progress_.mark(std::uint64_t(global_step_));
  const std::size_t begin = step * std::size_t(plan_.micro) * o_.accum_steps;
  const std::size_t step_rows = std::min(per_rank_ - begin, std::size_t(plan_.micro) * o_.accum_steps);
  // A SIGUSR1 is sent with the next step, once: every rank learns of it
  // through that step's all-reduce.
  const bool stop_request = take_preempt_request();
  if (auto st = program_.run(epoch_index_.get() + begin, step_rows, stop_request, global_step_); !st) return st;
  ++adam_step_;
  ++global_step_;
  tally.samples += double(step_rows) * world_;
  const bool last = step + 1 == steps_per_epoch_;
  if (auto previous = readback_.post_and_take_previous())
    on_step_result(*previous, last ? epoch + 1 : epoch, last ? 0 : (long long)(step + 1), tally);
  if (!stop_ && o_.save_every_steps > 0 && global_step_ % o_.save_every_steps == 0 && !last)
    save_snapshot(epoch, (long long)(step + 1), "periodic");
  return Ok{};
}

// `next_epoch` and `next_step`: where a snapshot taken now resumes.
void Trainer::on_step_result(const StepControl& result, int next_epoch, long long next_step, EpochTally& tally) {
  tally.loss_sum += result.loss;
  ++tally.loss_steps;
  // Once stopping, a later step's request (another rank's SIGUSR1 that
  // travelled one step after the first) must not save again elsewhere.
  if (!result.stop || stop_) return;
  spdlog::info("SIGUSR1 (preemption warning): saving at global step {}", global_step_);
  save_snapshot(next_epoch, next_step, "on SIGUSR1");
  if (o_.on_preempt == "exit") {
    spdlog::info("exiting after the snapshot ({}); the next run resumes from it",
                 o_.on_preempt_given ? "--on-preempt exit" : "DDP_REQUEUE=1: --ddp-requeue requeues the job");
    stop_ = true;
  }
}

// The test split's accuracy (classifier) or MSE, reduced over ranks.
Result<double> Trainer::evaluate() {
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
  return spec.loss == LossKind::cross_entropy ? counts[0] / counts[1] : counts[0] / (counts[1] * spec.dims.back());
}

void Trainer::report_epoch(int epoch, const EpochTally& tally, double seconds) {
  const double rate = tally.samples / seconds;
  const double eta = (o_.epochs - epoch - 1) * seconds;
  spdlog::info("epoch {}/{}: loss {:.4f}, {} {:.4f}, {} samples/s, {:.2f} s, ETA {:.0f} s", epoch + 1, o_.epochs,
               last_loss_, metric_name(), test_metric_, fmt_rate(rate), seconds, eta);
  write_metrics(JsonLine()
                    .add("event", std::string("epoch"))
                    .add("epoch", (long long)(epoch + 1))
                    .add("attempt", (long long)id_.attempt)
                    .add("global_step", global_step_)
                    .add("train_loss", last_loss_)
                    .add(metric_name(), test_metric_)
                    .add("samples_per_second", rate)
                    .add("seconds", seconds));
}

// The final log line and metrics record, and --dump-params.
Status Trainer::report_final() {
  const double rate = train_seconds_ > 0 ? samples_total_ / train_seconds_ : 0;
  // No epoch trained in this run (resumed at the end): no loss to report.
  const std::string loss = std::isnan(last_loss_) ? "n/a (no step in this run)" : fmt::format("{:.4f}", last_loss_);
  spdlog::info("done: {} epochs on {} rank(s), {:.2f} s training, {} samples/s, final loss {}, {} {:.4f}", o_.epochs,
               world_, train_seconds_, fmt_rate(rate), loss,
               plan_.spec.loss == LossKind::cross_entropy ? "test accuracy" : "test MSE", test_metric_);
  write_metrics(JsonLine()
                    .add("event", std::string("final"))
                    .add("world_size", (long long)world_)
                    .add("epochs", (long long)o_.epochs)
                    .add("model", plan_.spec.describe())
                    .add("attempt", (long long)id_.attempt)
                    .add("resumed", (long long)resumed_)
                    .add("global_step", global_step_)
                    .add("train_seconds", train_seconds_)
                    .add("samples_per_second", rate)
                    .add("final_train_loss", last_loss_)
                    .add(metric_name(), test_metric_));
  if (!lead_ || o_.dump_params.empty()) return Ok{};
  std::vector<float> host(plan_.layout.parameters);
  ops_.download(host.data(), model_.parameters(), plan_.layout.parameters);
  std::ofstream out(o_.dump_params, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(host.data()), std::streamsize(host.size() * sizeof(float)));
  if (!out) return fail("--dump-params " + o_.dump_params + ": write failed");
  return Ok{};
}

// The run's state as a snapshot that resumes at (next_epoch, next_step_in_epoch).
Snapshot Trainer::snapshot_of(int next_epoch, long long next_step_in_epoch) {
  Snapshot snap;
  snap.meta = to_meta(SnapshotMeta{.model = plan_.spec.describe(),
                                   .optimizer = plan_.optimizer,
                                   .lr = plan_.lr,
                                   .batch_size = o_.batch_size,
                                   .accum_steps = o_.accum_steps,
                                   .world_size = world_,
                                   .position = {next_epoch, next_step_in_epoch, global_step_, adam_step_},
                                   .sampler_seed = o_.seed,
                                   .shuffle = o_.shuffle,
                                   .data = data_.train.origin});
  const std::size_t n = plan_.layout.parameters;
  for (const float* buffer : {static_cast<const float*>(model_.parameters()), static_cast<const float*>(optim_.a.get()),
                              static_cast<const float*>(optim_.b.get())}) {
    if (!buffer) continue;
    std::vector<float> host(n);
    ops_.download(host.data(), buffer, n);
    snap.blobs.push_back(std::move(host));
  }
  return snap;
}

// Rank 0 with --snapshot-dir. A failed save is a warning: training goes on,
// and the older snapshots stay.
void Trainer::save_snapshot(int next_epoch, long long next_step_in_epoch, const char* why) {
  if (!lead_ || o_.snapshot_dir.empty()) return;
  const auto t0 = Clock::now();
  const Snapshot snap = snapshot_of(next_epoch, next_step_in_epoch);
  const std::string name = snapshot_file_name(std::uint64_t(global_step_));
  ++snapshots_written_;
  const CrashPoint crash = snapshots_written_ != o_.crash_in_snapshot ? CrashPoint::none
                           : o_.crash_stage == "rename"              ? CrashPoint::before_rename
                                                                     : CrashPoint::half_written;
  if (crash != CrashPoint::none)
    std::fprintf(stderr, "ddp-train: fault injection: rank 0 is killed while writing %s (%s)\n", name.c_str(),
                 o_.crash_stage.c_str());
  if (auto st = write_file_durably(o_.snapshot_dir, name, encode_snapshot(snap), crash); !st) {
    spdlog::warn("warning: snapshot not saved: {}", st.error());
    return;
  }
  (void)prune_snapshots(o_.snapshot_dir, o_.keep);
  spdlog::info("saved {}/{} ({}, {:.2f} s)", o_.snapshot_dir, name, why, seconds_since(t0));
}

}  // namespace

int run_training(const TrainOptions& o) {
  auto identity = start_worker(o);
  if (!identity) {
    std::fprintf(stderr, "ddp-train: error: %s\n", identity.error().c_str());
    return 2;
  }
  const WorkerIdentity id = *identity;
  auto die = [&](const std::string& message) {
    std::fprintf(stderr, "ddp-train: error (rank %d): %s\n", id.rank, message.c_str());
    return 1;
  };
  install_preempt_handler();
  if (o.model == "gpt") return run_gpt_training(o, id);

  // Each step borrows from the ones before it, and locals go in reverse
  // order: the model and buffers before the backends, the backends before
  // the session whose store they use.
  auto data = load_data(o);
  if (!data) return die(data.error());
  auto planned = plan_run(o, id.world_size, data->train);
  if (!planned) return die(planned.error());
  const RunPlan& plan = *planned;
  auto joined = join_ranks(o, id, plan.fingerprint);
  if (!joined) return die(joined.error());
  std::optional<Session> session = std::move(joined).value();
  auto made = make_backend(o, id, session ? &*session : nullptr, plan.layout);
  if (!made) return die(made.error());
  Backend backend = std::move(made).value();
  if (o.cuda_graph && o.device != "cuda") return die("--cuda-graph needs --device cuda");
  log_start(o, plan, *data, backend, id.world_size);

  Model model(plan.spec, plan.layout, *backend.ops, plan.max_batch);
  const OptimizerMemory optim = alloc_optimizer_memory(*backend.ops, *backend.comm, plan.layout.total,
                                                       plan.layout.parameters, plan.optimizer != "sgd");
  if (auto st = upload_initial_parameters(*backend.ops, model, plan, o); !st) return die(st.error());
  const TrainState state{model.parameters(), optim.a.get(), optim.b.get()};
  auto start = start_from_rank_0(o, id, plan, session ? &*session : nullptr, backend, state);
  if (!start) return die(start.error());

  Trainer trainer(o, id, plan, *data, backend, model, optim, *start);
  if (auto st = trainer.run(); !st) return die(st.error());
  return 0;
}

}  // namespace ddp::train
