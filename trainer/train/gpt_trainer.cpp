#include "train/gpt_trainer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <vector>

#include "data/token_windows.hpp"
#include "ddp/wire/progress_file.hpp"
#include "model/gpt.hpp"
#include "train/metrics.hpp"
#include "train/resume.hpp"
#include "train/snapshot.hpp"
#include "train/snapshot_meta.hpp"
#include "train/worker_events.hpp"

namespace ddp::train {
namespace {

using Clock = std::chrono::steady_clock;
// nanoGPT's AdamW for GPT-2.
constexpr float kBeta1 = 0.9f, kBeta2 = 0.95f, kEps = 1e-8f;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The tokens training reads: a token file mapped, or --data random's.
struct TokenStream {
  std::optional<TokenFile> file;
  TokenHeader random_header;  // --data random
  std::vector<std::uint16_t> random;
  const TokenHeader& header() const { return file ? file->header() : random_header; }
  std::span<const std::uint16_t> tokens() const { return file ? file->tokens() : std::span(random); }
  std::string path() const { return file ? file->path() : "random"; }
};

struct TokenData {
  TokenStream train;
  std::optional<TokenFile> held_out;
};

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

// Parameters and AdamW's two moments, in ops memory.
struct GptState {
  OpsArray<float> params, m, v;
  std::size_t count = 0;
  TrainState view() { return {params.get(), m.get(), v.get()}; }
  std::vector<float> read(Ops& ops, const float* p) const {
    std::vector<float> host(count);
    ops.download(host.data(), p, count);
    return host;
  }
};

// The reports of a stretch of steps: their mean loss and tokens/s.
struct Stretch {
  Clock::time_point start = Clock::now();
  double loss_sum = 0;
  long long steps = 0;
};

class GptTrainer {
 public:
  GptTrainer(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan, const TokenData& data,
             const TokenWindows& windows, Backend& b, GptState state, const std::optional<ResumePoint>& start);
  Status run();

 private:
  Status train_step();
  void forward_backward(int micro_index, bool last, double& loss_sum, bool stop_request);
  void update(double grad_norm);
  Result<double> held_out_loss();
  Status evaluate_and_report(bool final);
  void log_stretch(float lr, double grad_norm);
  void save_snapshot(const char* why);
  Status report_final();

  const TrainOptions& o_;
  const WorkerIdentity& id_;
  const GptPlan& plan_;
  const TokenData& data_;
  Ops& ops_;
  Collectives& comm_;
  const bool lead_;
  const int world_;
  const TokenWindows windows_;
  GptModel model_;
  GptState state_;
  OpsArray<float> owned_grads_;
  float* grads_;  // parameters + control slots; the backend's shared memory when it offers some
  const OpsArray<float> decayed_;
  OpsArray<float> norm_;   // the gradient's sum of squares
  float control_[2] = {};  // the loss and stop slots' values, uploaded with the last micro-batch
  std::vector<std::uint16_t> inputs_, targets_;
  long long global_step_ = 0;
  const long long first_step_;  // where this run started (a snapshot's step, or 0)
  int adam_step_ = 0;
  OpsArray<int> adam_step_on_ops_;  // the same count, where AdamW increments it
  std::unique_ptr<MetricsFile> metrics_;
  const ProgressWriter progress_;
  Stretch stretch_;
  double train_seconds_ = 0;
  double last_loss_ = std::nan("");
  double held_loss_ = std::nan("");
  bool stop_ = false;
};

GptTrainer::GptTrainer(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan, const TokenData& data,
                       const TokenWindows& windows, Backend& b, GptState state, const std::optional<ResumePoint>& start)
    : o_(o),
      id_(id),
      plan_(plan),
      data_(data),
      ops_(*b.ops),
      comm_(*b.comm),
      lead_(id.rank == 0),
      world_(id.world_size),
      windows_(windows),
      model_(*b.ops, plan.config, plan.run.micro),
      state_(std::move(state)),
      grads_(comm_.gradient_memory(plan.run.layout.total)),
      decayed_(decay_mask(*b.ops, plan.config)),
      norm_(alloc_floats(*b.ops, 1)),
      inputs_(std::size_t(plan.run.micro) * std::size_t(plan.config.context)),
      targets_(inputs_.size()),
      global_step_(start ? start->global_step : 0),
      first_step_(global_step_),
      adam_step_(start ? start->adam_step : 0),
      adam_step_on_ops_(alloc_ints(*b.ops, 1)),
      progress_(std::getenv("DDP_PROGRESS_FILE") ? std::getenv("DDP_PROGRESS_FILE") : "") {
  if (!grads_) {
    owned_grads_ = alloc_floats(ops_, plan.run.layout.total);
    grads_ = owned_grads_.get();
  }
  ops_.upload_int(adam_step_on_ops_.get(), &adam_step_, 1);
  if (lead_ && !o.metrics.empty()) {
    metrics_ = std::make_unique<MetricsFile>(o.metrics, id.attempt > 0 || start.has_value());
    if (!metrics_->open()) spdlog::warn("warning: {}; no metrics are written", metrics_->error());
  }
  if (start && global_step_ >= o.steps)
    spdlog::info(
        "the snapshot is from the end of training ({} of {} steps): nothing left to train; use another "
        "--snapshot-dir or more --steps to train further",
        global_step_, o.steps);
}

Status GptTrainer::run() {
  while (global_step_ < o_.steps && !stop_) {
    if (auto st = train_step(); !st) return st;
    const bool at_eval = o_.eval_every > 0 && global_step_ % o_.eval_every == 0 && global_step_ < o_.steps;
    if (at_eval && !stop_)
      if (auto st = evaluate_and_report(false); !st) return st;
    if (!stop_ && o_.save_every_steps > 0 && global_step_ % o_.save_every_steps == 0 && global_step_ < o_.steps)
      save_snapshot("periodic");
  }
  if (stop_) return Ok{};
  if (auto st = evaluate_and_report(true); !st) return st;
  if (o_.save_every > 0 && global_step_ > first_step_) save_snapshot("end of training");
  return report_final();
}

// One optimizer step: every micro-batch's forward and backward (the last
// one's buckets all-reduced as backward completes them), then the update.
Status GptTrainer::train_step() {
  inject_faults(o_, id_, global_step_);
  progress_.mark(std::uint64_t(global_step_));
  const bool stop_request = take_preempt_request();
  const auto t0 = Clock::now();
  ops_.fill(grads_, 0.0f, plan_.run.layout.total);
  double loss_sum = 0;
  for (int a = 0; a < o_.accum_steps; ++a) forward_backward(a, a + 1 == o_.accum_steps, loss_sum, stop_request);
  if (auto st = comm_.finish_buckets(); !st) return st;
  const ParamLayout& layout = plan_.run.layout;
  float reduced[2] = {};  // the global batch's loss, and whether any rank was asked to stop
  ops_.download(reduced, grads_ + layout.control_offset, 2);
  const double loss = reduced[0];
  const bool stop = reduced[1] > 0;
  // The reduced gradient's norm: the same on every rank.
  ops_.fill(norm_.get(), 0.0f, 1);
  ops_.sum_squares(grads_, layout.parameters, norm_.get());
  float squares = 0;
  ops_.download(&squares, norm_.get(), 1);
  const double norm = std::sqrt(double(squares));
  update(norm);
  ++global_step_;
  train_seconds_ += seconds_since(t0);
  last_loss_ = loss;
  stretch_.loss_sum += loss;
  ++stretch_.steps;
  if (global_step_ % std::max(1LL, o_.log_every) == 0 || global_step_ == o_.steps)
    log_stretch(plan_.schedule.at(global_step_ - 1), norm);
  if (stop && !stop_) {
    spdlog::info("SIGUSR1 (preemption warning): saving at global step {}", global_step_);
    save_snapshot("on SIGUSR1");
    stop_ = o_.on_preempt == "exit";
    if (stop_)
      spdlog::info("exiting after the snapshot ({}); the next run resumes from it",
                   o_.on_preempt_given ? "--on-preempt exit" : "DDP_REQUEUE=1: --ddp-requeue requeues the job");
  }
  return Ok{};
}

void GptTrainer::forward_backward(int micro_index, bool last, double& loss_sum, bool stop_request) {
  const int micro = plan_.run.micro, T = plan_.config.context;
  windows_.fill(data_.train.tokens(), global_step_, first_row_of(id_.rank, micro, o_.accum_steps, micro_index), micro,
                inputs_.data(), targets_.data());
  loss_sum += model_.forward(state_.params.get(), inputs_.data(), targets_.data(), micro, T);
  if (!last) return model_.backward(state_.params.get(), grads_);
  // Each rank's mean over its micro-batches, pre-divided by the world: the
  // SUM over ranks is the global batch's mean (the loss slot too).
  const ParamLayout& layout = plan_.run.layout;
  const float prescale = 1.0f / float(world_ * o_.accum_steps);
  control_[0] = float(loss_sum);
  control_[1] = stop_request ? 1.0f : 0.0f;
  ops_.upload(grads_ + layout.control_offset, control_, 2);
  std::size_t next = 0;
  model_.backward(state_.params.get(), grads_, [&](int group) {
    for (; next < layout.buckets.size() && layout.buckets[next].ready_after_layer == group; ++next)
      comm_.start_bucket(grads_ + layout.buckets[next].offset, layout.buckets[next].count, prescale);
  });
}

// AdamW at the schedule's rate for this step, on the clipped gradient.
void GptTrainer::update(double grad_norm) {
  const float lr = plan_.schedule.at(global_step_);
  ++adam_step_;  // as adamw() counts on the ops' side
  ops_.adamw(state_.params.get(), state_.m.get(), state_.v.get(), grads_, decayed_.get(), state_.count, lr, kBeta1,
             kBeta2, kEps, o_.weight_decay, clip_factor(grad_norm, o_.clip_norm), adam_step_on_ops_.get());
}

void GptTrainer::log_stretch(float lr, double grad_norm) {
  const double seconds = seconds_since(stretch_.start);
  const double tokens = double(stretch_.steps) * plan_.batch_size * plan_.config.context;
  const double rate = seconds > 0 ? tokens / seconds : 0;
  const double loss = stretch_.loss_sum / double(std::max(1LL, stretch_.steps));
  spdlog::info("step {}/{}: loss {:.4f}, lr {:.2e}, grad norm {:.3f}, {:.0f} tokens/s, {:.2f} passes over the data",
               global_step_, o_.steps, loss, lr, grad_norm, rate, windows_.passes(global_step_));
  if (metrics_)
    metrics_->write(JsonLine()
                        .add("event", std::string("step"))
                        .add("global_step", global_step_)
                        .add("attempt", (long long)id_.attempt)
                        .add("train_loss", loss)
                        .add("lr", double(lr))
                        .add("grad_norm", grad_norm)
                        .add("tokens_per_second", rate));
  stretch_ = Stretch{};
}

// The mean loss over the held-out file's first --eval-windows windows
// (consecutive, as in training), rank r scoring windows r, r + R, ...
Result<double> GptTrainer::held_out_loss() {
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

Status GptTrainer::evaluate_and_report(bool final) {
  if (!data_.held_out) return Ok{};
  const auto t0 = Clock::now();
  auto loss = held_out_loss();
  if (!loss) return fail(loss.error());
  held_loss_ = *loss;
  spdlog::info("{}step {}: held-out loss {:.4f} ({:.2f} s)", final ? "end of training, " : "", global_step_, held_loss_,
               seconds_since(t0));
  if (metrics_)
    metrics_->write(
        JsonLine().add("event", std::string("eval")).add("global_step", global_step_).add("held_out_loss", held_loss_));
  stretch_.start += Clock::now() - t0;  // not counted in the steps' tokens/s
  return Ok{};
}

// Rank 0 with --snapshot-dir. A failed save is a warning: training goes on.
void GptTrainer::save_snapshot(const char* why) {
  if (!lead_ || o_.snapshot_dir.empty()) return;
  const auto t0 = Clock::now();
  Snapshot snap;
  snap.meta = to_meta(SnapshotMeta{.model = plan_.run.spec.describe(),
                                   .optimizer = plan_.run.optimizer,
                                   .lr = plan_.run.lr,
                                   .batch_size = plan_.batch_size,
                                   .accum_steps = o_.accum_steps,
                                   .world_size = world_,
                                   .position = {0, global_step_, global_step_, adam_step_},
                                   .sampler_seed = o_.seed,
                                   .shuffle = false,
                                   .data = data_.train.path()});
  snap.blobs = {state_.read(ops_, state_.params.get()), state_.read(ops_, state_.m.get()),
                state_.read(ops_, state_.v.get())};
  const std::string name = snapshot_file_name(std::uint64_t(global_step_));
  if (auto st = write_file_durably(o_.snapshot_dir, name, encode_snapshot(snap), CrashPoint::none); !st) {
    spdlog::warn("warning: snapshot not saved: {}", st.error());
    return;
  }
  (void)prune_snapshots(o_.snapshot_dir, o_.keep);
  spdlog::info("saved {}/{} ({}, {:.2f} s)", o_.snapshot_dir, name, why, seconds_since(t0));
}

Status GptTrainer::report_final() {
  const double tokens = double(global_step_) * plan_.batch_size * plan_.config.context;
  // Resumed at the end (a requeue after the last step): no step, no loss.
  const std::string loss = std::isnan(last_loss_) ? "n/a (no step in this run)" : fmt::format("{:.4f}", last_loss_);
  const std::string held = data_.held_out ? fmt::format("{:.4f}", held_loss_) : "n/a (no --eval-data)";
  spdlog::info("done: {} steps on {} rank(s), {:.2f} s training, final loss {}, held-out loss {}", global_step_, world_,
               train_seconds_, loss, held);
  if (metrics_)
    metrics_->write(JsonLine()
                        .add("event", std::string("final"))
                        .add("model", plan_.run.spec.describe())
                        .add("world_size", (long long)world_)
                        .add("global_step", global_step_)
                        .add("train_seconds", train_seconds_)
                        .add("tokens", tokens)
                        .add("final_train_loss", last_loss_)
                        .add("held_out_loss", held_loss_));
  if (!lead_ || o_.dump_params.empty()) return Ok{};
  const std::vector<float> params = state_.read(ops_, state_.params.get());
  std::ofstream out(o_.dump_params, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(params.data()), std::streamsize(params.size() * sizeof(float)));
  if (!out) return fail("--dump-params " + o_.dump_params + ": write failed");
  return Ok{};
}

}  // namespace

int run_gpt_training(const TrainOptions& o, const WorkerIdentity& id) {
  auto die = [&](const std::string& message) {
    std::fprintf(stderr, "ddp-train: error (rank %d): %s\n", id.rank, message.c_str());
    return 1;
  };
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
  spdlog::info(
      "{} on {} rank(s) [{}], adamw lr {} (warm-up {} steps, cosine to {:.2e} at step {}), global batch {} "
      "sequences ({} per rank x {} accumulation step(s)), {} parameters",
      plan.config.describe(), id.world_size, backend.comm->name(), plan.run.lr, plan.schedule.warmup,
      plan.schedule.min_lr, o.steps, plan.batch_size, plan.run.micro, o.accum_steps, plan.run.layout.parameters);
  spdlog::info("data: {} ({} tokens, {} windows{}); compute: {}", data->train.path(), data->train.header().count,
               windows->windows(), data->held_out ? ", held out: " + data->held_out->path() : std::string(),
               backend.ops->name());
  spdlog::debug("{}", describe_buckets(plan.run.layout));

  auto init = initial_parameters_of(plan, o);
  if (!init) return die(init.error());
  const std::size_t n = plan.run.layout.parameters;
  Ops& ops = *backend.ops;
  GptState state{alloc_floats(ops, n), alloc_floats(ops, n), alloc_floats(ops, n), n};
  ops.upload(state.params.get(), init->data(), n);
  auto start = start_from_rank_0(o, id, plan.run, session ? &*session : nullptr, backend, state.view());
  if (!start) return die(start.error());
  GptTrainer trainer(o, id, plan, *data, *windows, backend, std::move(state), *start);
  if (auto st = trainer.run(); !st) return die(st.error());
  return 0;
}

}  // namespace ddp::train
