#include "train/step.hpp"

#include <algorithm>

namespace ddp::train {

OptimizerKind optimizer_kind(const std::string& name) {
  return name == "adam" ? OptimizerKind::adam : name == "adadelta" ? OptimizerKind::adadelta : OptimizerKind::sgd;
}

StepProgram::StepProgram(Ops& ops, Collectives& comm, Model& model, const ParamLayout& layout,
                         const DeviceSplit& train, const BatchBuffers& batch, float* grads,
                         const OptimizerState& optimizer, Shape shape)
    : ops_(ops),
      comm_(comm),
      model_(model),
      layout_(layout),
      train_(train),
      batch_(batch),
      grads_(grads),
      opt_(optimizer),
      shape_(shape) {
  step_index_ = ops_.alloc_int(std::size_t(shape_.micro) * shape_.accum_steps);
  stop_request_ = ops_.alloc(1);
  round_ = ops_.alloc_int(1);
  graph_wanted_ = shape_.cuda_graph;
}

StepProgram::~StepProgram() {
  // The graph goes before the communicator (Ops::drop_capture). After a failed
  // step the communicator may have been aborted, and destroying a graph that
  // holds its collectives would run NCCL's clean-up on freed memory: the
  // graph is left to the process's exit then.
  if (captured_ && !failed_) ops_.drop_capture();
  ops_.release(step_index_);
  ops_.release(stop_request_);
  ops_.release(round_);
}

const float* StepProgram::control_slots() const { return grads_ + layout_.control_offset; }

std::string StepProgram::describe() const {
  if (!graph_wanted_) return "eager";
  return captured_ ? "cuda graph (captured)" : "cuda graph (captured at the second full step)";
}

void StepProgram::set_lr(float lr) {
  if (lr == opt_.lr) return;
  opt_.lr = lr;
  if (!captured_) return;
  ops_.drop_capture();
  captured_ = false;
}

StepWork StepProgram::begin(const int* indices, std::size_t rows, bool stop_requested, long long round) {
  ops_.copy_int(step_index_, indices, rows);
  ops_.fill(stop_request_, stop_requested ? 1.0f : 0.0f, 1);
  round_host_ = int(round);  // a member: an upload's source outlives the call
  ops_.upload_int(round_, &round_host_, 1);
  step_rows_ = rows;
  const StepWork eager{true, int((rows + std::size_t(shape_.micro) - 1) / std::size_t(shape_.micro))};
  const bool full = rows == std::size_t(shape_.micro) * shape_.accum_steps;
  replaying_ = graph_wanted_ && full && captured_;
  if (replaying_) return StepWork{false, eager.micro_batches};
  if (!graph_wanted_ || !full) return eager;
  if (!warmed_up_) {
    warmed_up_ = true;
    return eager;
  }
  if (!ops_.begin_capture()) {  // this backend cannot capture: eager from now on
    graph_wanted_ = false;
    return eager;
  }
  comm_.set_capturing(true);
  recording_ = true;
  return eager;
}

Status StepProgram::end() {
  if (recording_) {
    recording_ = false;
    const Status made = ops_.end_capture();
    comm_.set_capturing(false);
    if (!made)
      return failed(fail("could not capture the training step into a CUDA graph: " + made.error() +
                         "; run without --cuda-graph"));
    captured_ = replaying_ = true;
  }
  if (!replaying_) return Ok{};
  ops_.replay();  // the captured step was recorded, not run: this runs it
  return failed(comm_.watch_compute_stream());
}

Status StepProgram::failed(Status st) {
  if (!st) failed_ = true;
  return st;
}

StepProgram::MicroBatch StepProgram::micro_batch(int micro) const {
  const std::size_t first = std::size_t(micro) * std::size_t(shape_.micro);
  const int rows = int(std::min<std::size_t>(shape_.micro, step_rows_ - first));
  // Accumulation: each micro-batch's mean loss weighs by its share of the
  // step, so K micro-batches equal one batch of K times the rows.
  return MicroBatch{step_index_ + first, rows, float(rows) / float(step_rows_),
                    first + std::size_t(rows) == step_rows_};
}

// Backward adds into the gradients and the loss into its control slot, over
// every micro-batch of the step: both start from zero.
void StepProgram::zero_gradients() { ops_.fill(grads_, 0.0f, layout_.total); }

// Gathers the micro-batch's rows, runs the model forward (dropout keyed by
// the step and each row's sample) and the loss.
void StepProgram::forward(int m) {
  const MicroBatch micro = micro_batch(m);
  gather_batch(micro);
  const DropoutKey key{shape_.dropout_seed, 0, round_, micro.index};
  model_.forward(batch_.x, micro.rows, &key);
  loss(micro);
}

void StepProgram::gather_batch(const MicroBatch& micro) {
  ops_.gather_rows(train_.features, micro.index, micro.rows, train_.width, batch_.x);
  if (train_.labels) ops_.gather_labels(train_.labels, micro.index, micro.rows, batch_.labels);
  if (train_.targets) ops_.gather_rows(train_.targets, micro.index, micro.rows, train_.target_width, batch_.targets);
}

// Writes d(loss)/d(output) for backward and adds the loss into its control
// slot, both weighted by the micro-batch's share of the step.
void StepProgram::loss(const MicroBatch& micro) {
  float* loss_slot = grads_ + layout_.control_offset;
  const ModelSpec& spec = model_.spec();
  if (spec.loss == LossKind::cross_entropy)
    ops_.cross_entropy(model_.output(), batch_.labels, model_.output_grad(), micro.rows, spec.dims.back(),
                       micro.loss_weight, loss_slot);
  else
    ops_.mse(model_.output(), spec.kind == ModelKind::autoencoder ? batch_.x : batch_.targets, model_.output_grad(),
             std::size_t(micro.rows) * spec.dims.back(), micro.loss_weight, loss_slot);
}

// Backward through the model, layer by layer. On the last micro-batch each
// gradient bucket's all-reduce starts as soon as the layers it holds are
// done, overlapping the rest of backward; the others only accumulate
// (no_sync: one reduction per step). The stop request rides in the last
// bucket, beside the loss.
void StepProgram::backward(int m) {
  const MicroBatch micro = micro_batch(m);
  if (micro.last) ops_.copy(grads_ + layout_.control_offset + 1, stop_request_, 1);
  std::size_t next_bucket = 0;
  model_.backward(batch_.x, micro.rows, grads_, [&](int layer) {
    if (!micro.last) return;
    while (next_bucket < layout_.buckets.size() && layout_.buckets[next_bucket].ready_after_layer == layer) {
      const Bucket& b = layout_.buckets[next_bucket++];
      comm_.start_bucket(grads_ + b.offset, b.count, shape_.prescale);
    }
  });
}

// A failure ends a recording too: a capture is always ended.
Status StepProgram::wait_for_allreduce() {
  const Status done = comm_.finish_buckets();
  if (!done && recording_) {
    recording_ = false;
    (void)ops_.end_capture();
    comm_.set_capturing(false);
  }
  return failed(done);
}

void StepProgram::optimizer_update() {
  if (opt_.kind == OptimizerKind::adam)
    ops_.adam(model_.parameters(), opt_.a, opt_.b, grads_, layout_.parameters, opt_.lr, opt_.beta1, opt_.beta2,
              opt_.eps, opt_.adam_count);
  else if (opt_.kind == OptimizerKind::adadelta)
    ops_.adadelta(model_.parameters(), opt_.a, opt_.b, grads_, layout_.parameters, opt_.lr, OptimizerState::kRho,
                  OptimizerState::kAdadeltaEps);
  else
    ops_.sgd_momentum(model_.parameters(), opt_.a, grads_, layout_.parameters, opt_.lr, opt_.momentum);
}

// ---------------------------------------------------------------------------

StepReadback::StepReadback(Ops& ops, const float* slots, int lag) : ops_(ops), slots_(slots), lag_(lag) {
  host_ = ops_.alloc_host(std::size_t(Ops::kFences) * ParamLayout::kControlSlots);
}

StepReadback::~StepReadback() {
  ops_.synchronize();  // no copy may still be writing into host_
  ops_.release_host(host_);
}

std::optional<StepControl> StepReadback::post_and_take() {
  const int slot = int(posted_ % Ops::kFences);  // its previous user was taken already
  ops_.download_async(host_ + std::size_t(slot) * ParamLayout::kControlSlots, slots_, ParamLayout::kControlSlots);
  ops_.fence(slot);
  ++posted_;
  if (posted_ - taken_ <= lag_) return std::nullopt;
  return take();
}

std::optional<StepControl> StepReadback::drain() {
  if (taken_ == posted_) return std::nullopt;
  return take();
}

StepControl StepReadback::take() {
  const int slot = int(taken_ % Ops::kFences);
  ops_.wait_fence(slot);
  ++taken_;
  const float* values = host_ + std::size_t(slot) * ParamLayout::kControlSlots;
  return StepControl{values[0], values[1] > 0};
}

}  // namespace ddp::train
