#include "train/gpt_task.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "model/gpt.hpp"

namespace ddp::train {
namespace {

using GptClock = std::chrono::steady_clock;
// nanoGPT's AdamW for GPT-2.
constexpr float kBeta1 = 0.9f, kBeta2 = 0.95f, kEps = 1e-8f;

double gpt_seconds_since(GptClock::time_point t) {
  return std::chrono::duration<double>(GptClock::now() - t).count();
}

// 1 where AdamW decays (gpt_decayed()), else 0, in ops memory.
OpsArray<float> decay_mask(Ops& ops, const GptConfig& c) {
  const GptLayout l = gpt_layout(c);
  std::vector<float> mask(l.total, 0.0f);
  for (const auto& r : gpt_decayed(l, c))
    std::fill(mask.begin() + std::ptrdiff_t(r.begin), mask.begin() + std::ptrdiff_t(r.end), 1.0f);
  auto on_ops = alloc_floats(ops, mask.size());
  ops.upload(on_ops.get(), mask.data(), mask.size());
  return on_ops;
}

// The reports of a stretch of steps: their mean loss and tokens/s.
struct Stretch {
  GptClock::time_point start = GptClock::now();
  double loss_sum = 0;
  long long steps = 0;
};

class GptTask final : public TrainingTask {
 public:
  GptTask(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan, const TokenData& data,
          const TokenWindows& windows, Backend& b, GptState state, const ResumePoint& start, bool resumed,
          MetricsFile* metrics);

  const Schedule& schedule() const override { return schedule_; }
  void begin_epoch(int) override {}  // the rate is the schedule's at each step
  StepWork begin_step(const ResumePoint& at, bool stop_request) override;
  void zero_grad() override { ops_.fill(grads_, 0.0f, plan_.run.layout.total); }
  void forward(int micro) override;
  void backward(int micro) override;
  Status all_reduce() override { return comm_.finish_buckets(); }
  void update() override;
  Status end_step() override {
    train_seconds_ += gpt_seconds_since(step_start_);
    return Ok{};
  }
  const float* control_slots() const override { return grads_ + plan_.run.layout.control_offset; }

  void record(const StepControl& result) override {
    last_loss_ = result.loss;
    stretch_.loss_sum += result.loss;
    ++stretch_.steps;
  }
  void log_steps(long long global_step) override;
  Status evaluate(bool end_of_epoch, long long global_step) override;
  void report_epoch(int, double, long long) override {}  // its lines come every --log-every steps
  void report_final(long long global_step) override;

  TrainState state() const override {
    return train_state(state_.count, state_.params.get(), plan_.run.optimizer, state_.m.get(), state_.v.get());
  }
  SnapshotMeta snapshot_meta(const ResumePoint& next) const override;

 private:
  Result<double> held_out_loss();

  const TrainOptions& o_;
  const WorkerIdentity& id_;
  const GptPlan& plan_;
  const TokenData& data_;
  Ops& ops_;
  Collectives& comm_;
  const int world_;
  const TokenWindows windows_;
  const Schedule schedule_;
  MetricsFile* const metrics_;
  GptModel model_;
  GptState state_;
  OpsArray<float> owned_grads_;
  float* grads_;  // parameters + control slots; the backend's shared memory when it offers some
  const OpsArray<float> decayed_;
  OpsArray<float> norm_;        // the gradient's sum of squares
  OpsArray<int> adam_count_;    // AdamW's step count, which Ops::adamw increments in ops memory
  std::vector<std::uint16_t> inputs_, targets_;
  // This step's.
  long long step_ = 0;  // its global step: its windows and its rate
  bool stop_request_ = false;
  double loss_sum_ = 0;         // its micro-batches' losses
  float control_[2] = {};       // the loss and stop slots' values, uploaded with the last micro-batch
  GptClock::time_point step_start_;
  float lr_ = 0;                // the rate it took, and its gradient's norm: for the log
  double grad_norm_ = 0;
  // The run's.
  Stretch stretch_;
  double train_seconds_ = 0;
  double last_loss_ = std::nan("");
  double held_loss_ = std::nan("");
};

GptTask::GptTask(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan, const TokenData& data,
                 const TokenWindows& windows, Backend& b, GptState state, const ResumePoint& start, bool resumed,
                 MetricsFile* metrics)
    : o_(o),
      id_(id),
      plan_(plan),
      data_(data),
      ops_(*b.ops),
      comm_(*b.comm),
      world_(id.world_size),
      windows_(windows),
      schedule_{.epochs = 1,
                .steps_in_epoch = o.steps,
                .eval_every = o.eval_every,
                .log_every = o.log_every,
                .result_lag = 0,
                .epoch_end = "end of training"},
      metrics_(metrics),
      model_(*b.ops, plan.config, plan.run.micro),
      state_(std::move(state)),
      grads_(comm_.gradient_memory(plan.run.layout.total)),
      decayed_(decay_mask(*b.ops, plan.config)),
      norm_(alloc_floats(*b.ops, 1)),
      adam_count_(alloc_ints(*b.ops, 1)),
      inputs_(std::size_t(plan.run.micro) * std::size_t(plan.config.context)),
      targets_(inputs_.size()) {
  if (!grads_) {
    owned_grads_ = alloc_floats(ops_, plan.run.layout.total);
    grads_ = owned_grads_.get();
  }
  const int adam_step = start.adam_step;
  ops_.upload_int(adam_count_.get(), &adam_step, 1);
  if (resumed && start.global_step >= o.steps)
    spdlog::info(
        "the snapshot is from the end of training ({} of {} steps): nothing left to train; use another "
        "--snapshot-dir or more --steps to train further",
        start.global_step, o.steps);
}

StepWork GptTask::begin_step(const ResumePoint& at, bool stop_request) {
  step_ = at.global_step;
  stop_request_ = stop_request;
  loss_sum_ = 0;
  step_start_ = GptClock::now();
  return StepWork{true, o_.accum_steps};
}

// Micro-batch `micro` of this rank's rows of the step (data/token_windows.hpp).
void GptTask::forward(int micro) {
  const int rows = plan_.run.micro, T = plan_.config.context;
  windows_.fill(data_.train.tokens(), step_, first_row_of(id_.rank, rows, o_.accum_steps, micro), rows,
                inputs_.data(), targets_.data());
  loss_sum_ += model_.forward(state_.params.get(), inputs_.data(), targets_.data(), rows, T);
}

void GptTask::backward(int micro) {
  if (micro + 1 < o_.accum_steps) return model_.backward(state_.params.get(), grads_);
  // Each rank's mean over its micro-batches, pre-divided by the world: the
  // SUM over ranks is the global batch's mean (the loss slot too).
  const ParamLayout& layout = plan_.run.layout;
  const float prescale = 1.0f / float(world_ * o_.accum_steps);
  control_[0] = float(loss_sum_);
  control_[1] = stop_request_ ? 1.0f : 0.0f;
  ops_.upload(grads_ + layout.control_offset, control_, 2);
  std::size_t next = 0;
  model_.backward(state_.params.get(), grads_, [&](int group) {
    for (; next < layout.buckets.size() && layout.buckets[next].ready_after_layer == group; ++next)
      comm_.start_bucket(grads_ + layout.buckets[next].offset, layout.buckets[next].count, prescale);
  });
}

// AdamW at the schedule's rate for this step, on the gradient clipped by its
// global norm (the reduced gradient's: the same on every rank).
void GptTask::update() {
  const ParamLayout& layout = plan_.run.layout;
  ops_.fill(norm_.get(), 0.0f, 1);
  ops_.sum_squares(grads_, layout.parameters, norm_.get());
  float squares = 0;
  ops_.download(&squares, norm_.get(), 1);
  grad_norm_ = std::sqrt(double(squares));
  lr_ = plan_.schedule.at(step_);
  ops_.adamw(state_.params.get(), state_.m.get(), state_.v.get(), grads_, decayed_.get(), state_.count, lr_, kBeta1,
             kBeta2, kEps, o_.weight_decay, clip_factor(grad_norm_, o_.clip_norm), adam_count_.get());
}

void GptTask::log_steps(long long global_step) {
  const double seconds = gpt_seconds_since(stretch_.start);
  const double tokens = double(stretch_.steps) * plan_.batch_size * plan_.config.context;
  const double rate = seconds > 0 ? tokens / seconds : 0;
  const double loss = stretch_.loss_sum / double(std::max(1LL, stretch_.steps));
  spdlog::info("step {}/{}: loss {:.4f}, lr {:.2e}, grad norm {:.3f}, {:.0f} tokens/s, {:.2f} passes over the data",
               global_step, o_.steps, loss, lr_, grad_norm_, rate, windows_.passes(global_step));
  if (metrics_)
    metrics_->write(JsonLine()
                        .add("event", std::string("step"))
                        .add("global_step", global_step)
                        .add("attempt", (long long)id_.attempt)
                        .add("train_loss", loss)
                        .add("lr", double(lr_))
                        .add("grad_norm", grad_norm_)
                        .add("tokens_per_second", rate));
  stretch_ = Stretch{};
}

// The mean loss over the held-out file's first --eval-windows windows
// (consecutive, as in training), rank r scoring windows r, r + R, ...
Result<double> GptTask::held_out_loss() {
  const auto tokens = data_.held_out->tokens();
  const std::size_t T = std::size_t(plan_.config.context);
  std::size_t windows = tokens.size() > T ? (tokens.size() - 1) / T : 0;
  if (o_.eval_windows > 0) windows = std::min(windows, std::size_t(o_.eval_windows));
  float sums[2] = {0, 0};  // loss x windows, windows
  std::vector<std::size_t> mine;
  for (std::size_t w = std::size_t(id_.rank); w < windows; w += std::size_t(world_)) mine.push_back(w);
  for (std::size_t begin = 0; begin < mine.size(); begin += std::size_t(plan_.run.micro)) {
    const int rows = int(std::min<std::size_t>(std::size_t(plan_.run.micro), mine.size() - begin));
    for (int r = 0; r < rows; ++r) {
      const std::uint16_t* window = tokens.data() + mine[begin + std::size_t(r)] * T;
      std::copy(window, window + T, inputs_.data() + std::size_t(r) * T);
      std::copy(window + 1, window + T + 1, targets_.data() + std::size_t(r) * T);
    }
    sums[0] += model_.forward(state_.params.get(), inputs_.data(), targets_.data(), rows, int(T)) * float(rows);
    sums[1] += float(rows);
  }
  const auto reduced = alloc_floats(ops_, 2);  // the communicator reduces ops memory (a GPU's with NCCL)
  ops_.upload(reduced.get(), sums, 2);
  if (auto st = comm_.allreduce_sum(reduced.get(), 2); !st) return fail(st.error());
  ops_.download(sums, reduced.get(), 2);
  if (sums[1] == 0)
    return fail("--eval-data " + o_.eval_data + " holds no window of context " + std::to_string(T) +
                " and its next token: give a longer held-out text");
  return double(sums[0] / sums[1]);
}

// The held-out loss, with --eval-data; its time is left out of the stretch's tokens/s.
Status GptTask::evaluate(bool end_of_epoch, long long global_step) {
  if (!data_.held_out) return Ok{};
  const auto t0 = GptClock::now();
  auto loss = held_out_loss();
  if (!loss) return fail(loss.error());
  held_loss_ = *loss;
  spdlog::info("{}step {}: held-out loss {:.4f} ({:.2f} s)", end_of_epoch ? "end of training, " : "", global_step,
               held_loss_, gpt_seconds_since(t0));
  if (metrics_)
    metrics_->write(
        JsonLine().add("event", std::string("eval")).add("global_step", global_step).add("held_out_loss", held_loss_));
  stretch_.start += GptClock::now() - t0;
  return Ok{};
}

void GptTask::report_final(long long global_step) {
  const double tokens = double(global_step) * plan_.batch_size * plan_.config.context;
  // Resumed at the end (a requeue after the last step): no step, no loss.
  const std::string loss = std::isnan(last_loss_) ? "n/a (no step in this run)" : fmt::format("{:.4f}", last_loss_);
  const std::string held = data_.held_out ? fmt::format("{:.4f}", held_loss_) : "n/a (no --eval-data)";
  spdlog::info("done: {} steps on {} rank(s), {:.2f} s training, final loss {}, held-out loss {}", global_step, world_,
               train_seconds_, loss, held);
  if (metrics_)
    metrics_->write(JsonLine()
                        .add("event", std::string("final"))
                        .add("model", plan_.run.spec.describe())
                        .add("world_size", (long long)world_)
                        .add("global_step", global_step)
                        .add("train_seconds", train_seconds_)
                        .add("tokens", tokens)
                        .add("final_train_loss", last_loss_)
                        .add("held_out_loss", held_loss_));
}

SnapshotMeta GptTask::snapshot_meta(const ResumePoint& next) const {
  return SnapshotMeta{.model = plan_.run.spec.describe(),
                      .optimizer = plan_.run.optimizer,
                      .lr = plan_.run.lr,
                      .batch_size = plan_.batch_size,
                      .accum_steps = o_.accum_steps,
                      .world_size = world_,
                      .position = gpt_position(next),
                      .sampler_seed = o_.seed,
                      .shuffle = false,
                      .data = data_.train.path()};
}

}  // namespace

ResumePoint gpt_position(const ResumePoint& at) { return ResumePoint{0, at.global_step, at.global_step, at.adam_step}; }

std::unique_ptr<TrainingTask> make_gpt_task(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan,
                                            const TokenData& data, const TokenWindows& windows, Backend& b,
                                            GptState state, const ResumePoint& start, bool resumed,
                                            MetricsFile* metrics) {
  return std::make_unique<GptTask>(o, id, plan, data, windows, b, std::move(state), start, resumed, metrics);
}

}  // namespace ddp::train
