// The trainer's models end to end on the CPU backend: every layer's and
// every loss's gradient against finite differences through Model and CpuOps
// (the code ddp-train runs), accumulation equal to one big batch, and the
// bucket layout PyTorch's Reducer would build; one StepProgram step equal to
// that arithmetic, and the step results read back one step late.
#include <cmath>
#include <random>
#include <vector>

#include "model/layout.hpp"
#include "model/model.hpp"
#include "model/ops.hpp"
#include "process_group/cpu_collectives.hpp"
#include "train/step.hpp"
#include "suites.hpp"

using namespace ddp::train;

namespace {

struct Fixture {
  ModelSpec spec;
  ParamLayout layout;
  std::unique_ptr<Ops> ops = make_cpu_ops(1);
  std::unique_ptr<Model> model;
  std::vector<float> x, targets;
  std::vector<int> labels;
  int batch;

  Fixture(const char* kind, std::vector<int> hidden, int in, int classes, int batch_) : batch(batch_) {
    auto s = make_model_spec(kind, hidden, true, in, classes);
    ck_assert_msg(s.ok(), "%s", s.ok() ? "" : s.error().c_str());
    spec = *s;
    layout = plan_layout(spec.dims, 64, 256);  // tiny buckets: several of them
    model = std::make_unique<Model>(spec, layout, *ops, batch);
    const auto init = initial_parameters(spec, layout, 7);
    ops->upload(model->parameters(), init.data(), layout.total);
    std::mt19937 gen(3);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    x.resize(std::size_t(batch) * in);
    for (auto& v : x) v = u(gen);
    targets.resize(std::size_t(batch) * spec.dims.back());
    for (auto& v : targets) v = u(gen);
    for (int i = 0; i < batch; ++i) labels.push_back(i % std::max(classes, 1));
  }
  // Forward + loss over rows [from, from + rows), weighted by `scale`; fills output_grad.
  float loss(int from, int rows, float scale, float* acc) {
    model->forward(x.data() + std::size_t(from) * spec.dims[0], rows);
    if (spec.loss == LossKind::cross_entropy)
      ops->cross_entropy(model->output(), labels.data() + from, model->output_grad(), rows, spec.dims.back(), scale,
                         acc);
    else
      ops->mse(model->output(),
               spec.kind == ModelKind::autoencoder ? x.data() + std::size_t(from) * spec.dims[0]
                                                   : targets.data() + std::size_t(from) * spec.dims.back(),
               model->output_grad(), std::size_t(rows) * spec.dims.back(), scale, acc);
    return *acc;
  }
  std::vector<float> gradients(int micro_batches) {
    std::vector<float> grads(layout.total, 0.0f);
    const int rows = batch / micro_batches;
    for (int m = 0; m < micro_batches; ++m) {
      float acc = 0;
      loss(m * rows, rows, float(rows) / float(batch), &acc);
      model->backward(x.data() + std::size_t(m) * rows * spec.dims[0], rows, grads.data(), [](int) {});
    }
    return grads;
  }
};

void check_finite_differences(Fixture& f) {
  const auto grads = f.gradients(1);
  float* p = f.model->parameters();
  double worst = 0;
  // Small enough that no ReLU input crosses zero, large enough for float32.
  const float h = 1e-3f;
  for (std::size_t i = 0; i < f.layout.parameters; ++i) {
    const float keep = p[i];
    float up = 0, down = 0;
    p[i] = keep + h;
    f.loss(0, f.batch, 1.0f, &up);
    p[i] = keep - h;
    f.loss(0, f.batch, 1.0f, &down);
    p[i] = keep;
    const double numeric = (double(up) - down) / (2.0 * h);
    worst = std::max(worst, std::fabs(numeric - grads[i]) / std::max(1e-2, std::fabs(numeric) + std::fabs(grads[i])));
  }
  ck_assert_msg(worst < 0.05, "%s: worst relative gradient error %g", f.spec.describe().c_str(), worst);
}

}  // namespace

START_TEST(mlp_gradients_match_finite_differences) {
  Fixture f("mlp", {6, 5}, 7, 4, 5);
  check_finite_differences(f);
}
END_TEST

START_TEST(autoencoder_gradients_match_finite_differences) {
  Fixture f("ae", {4, 3, 4}, 6, 0, 3);
  check_finite_differences(f);
}
END_TEST

START_TEST(linear_gradients_match_finite_differences) {
  Fixture f("linear", {}, 20, 0, 8);
  check_finite_differences(f);
}
END_TEST

START_TEST(accumulation_equals_one_batch) {
  Fixture f("mlp", {8}, 6, 3, 8);
  const auto whole = f.gradients(1);
  const auto four = f.gradients(4);
  for (std::size_t i = 0; i < f.layout.parameters; ++i)
    ck_assert_msg(std::fabs(whole[i] - four[i]) < 1e-5f, "grad %zu: %g vs %g", i, whole[i], four[i]);
}
END_TEST

START_TEST(layout_follows_reverse_parameter_order) {
  // 784-256-128-10: parameters 235,146 floats (940,584 bytes) fit the 1 MiB
  // first bucket: one bucket, complete only after layer 0's backward.
  const ParamLayout mlp = plan_layout({784, 256, 128, 10}, 1 << 20, 25 << 20);
  ck_assert_uint_eq(mlp.parameters, 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  ck_assert_uint_eq(mlp.buckets.size(), 1);
  ck_assert_uint_eq(mlp.buckets[0].count, mlp.parameters + ParamLayout::kControlSlots);
  // Reverse order: the last layer's bias first, the first layer's weight last.
  ck_assert_uint_eq(mlp.bias_offset[2], 0);
  ck_assert_uint_eq(mlp.weight_offset[2], 10);
  ck_assert_uint_eq(mlp.weight_offset[0] + 784 * 256, mlp.parameters);
  // Small caps: buckets close once they reach their cap, never split a tensor,
  // and a bucket is ready after the lowest layer it holds.
  const ParamLayout small = plan_layout({784, 256, 128, 10}, 4096, 100000);
  ck_assert_uint_eq(small.buckets.size(), 3);
  ck_assert_uint_eq(small.buckets[0].count, 10 + 1280);  // b2, W2: 5,160 bytes >= 4 KiB closes it
  ck_assert_int_eq(small.buckets[0].ready_after_layer, 2);
  ck_assert_uint_eq(small.buckets[1].count, 128 + 128 * 256);  // b1, W1: past 100,000 bytes
  ck_assert_int_eq(small.buckets[1].ready_after_layer, 1);
  std::size_t covered = 0;
  for (const Bucket& b : small.buckets) {
    ck_assert_uint_eq(b.offset, covered);
    covered += b.count;
  }
  ck_assert_uint_eq(covered, small.total);
  ck_assert_int_eq(small.buckets.back().ready_after_layer, 0);
}
END_TEST

START_TEST(model_spec_defaults_and_errors) {
  auto mlp = make_model_spec("mlp", {}, false, 784, 10);
  ck_assert(mlp.ok());
  CK_STR_EQ(mlp->describe(), "mlp 784-256-128-10 (cross-entropy)");
  auto ae = make_model_spec("ae", {}, false, 784, 10);
  CK_STR_EQ(ae->describe(), "autoencoder 784-128-128-128-784 (MSE)");
  auto lin = make_model_spec("linear", {}, false, 20, 0);
  CK_STR_EQ(lin->describe(), "linear 20-1 (MSE)");
  auto bad = make_model_spec("linear", {8}, true, 20, 0);
  ck_assert(!bad.ok());
  CK_CONTAINS(bad.error(), "no hidden layers");
  CK_CONTAINS(make_model_spec("rnn", {}, false, 784, 10).error(), "unknown model");
}
END_TEST

namespace {

// One step as the training loop (train/loop.cpp) runs it.
ddp::Status run_step(StepProgram& program, const int* rows, std::size_t n, bool stop, long long round) {
  const StepWork work = program.begin(rows, n, stop, round);
  if (work.enqueue) {
    program.zero_gradients();
    for (int micro = 0; micro < work.micro_batches; ++micro) {
      program.forward(micro);
      program.backward(micro);
    }
    if (auto st = program.wait_for_allreduce(); !st) return st;
    program.optimizer_update();
  }
  return program.end();
}

}  // namespace

START_TEST(step_program_steps_and_reads_back_one_step_late) {
  Fixture f("mlp", {8}, 6, 3, 8);
  Ops& ops = *f.ops;
  // What one SGD step of two micro-batches of 4 rows must give.
  const std::vector<float> g = f.gradients(2);
  std::vector<float> expected(f.model->parameters(), f.model->parameters() + f.layout.parameters);
  const float lr = 0.1f;
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] -= lr * g[i];  // velocity = g on step one

  DeviceSplit train{std::size_t(f.batch), 6, f.x.data(), f.labels.data(), nullptr, 0};
  BatchBuffers batch{ops.alloc(std::size_t(f.batch) * 6), ops.alloc_int(std::size_t(f.batch)), nullptr};
  float* grads = ops.alloc(f.layout.total);
  OptimizerState opt{OptimizerKind::sgd, lr, 0.9f, 0.9f, 0.999f, 1e-8f, ops.alloc(f.layout.parameters), nullptr, nullptr};
  auto comm = make_local_collectives(ops);
  // --cuda-graph on a backend that cannot capture: every step runs eagerly.
  StepProgram program(ops, *comm, *f.model, f.layout, train, batch, grads, opt, StepProgram::Shape{4, 2, 1.0f, true});
  StepReadback readback(ops, program.control_slots(), 1);
  StepReadback at_once(ops, program.control_slots(), 0);
  int* rows = ops.alloc_int(std::size_t(f.batch));
  for (int i = 0; i < f.batch; ++i) rows[i] = i;

  ck_assert_int_eq(program.begin(rows, 5, false, 0).micro_batches, 2);  // a short step: 4 rows and 1
  ck_assert(run_step(program, rows, std::size_t(f.batch), false, 0).ok());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ck_assert_msg(std::fabs(f.model->parameters()[i] - expected[i]) < 1e-6f, "parameter %zu: %g, expected %g", i,
                  double(f.model->parameters()[i]), double(expected[i]));
  ck_assert(!readback.post_and_take());  // nothing earlier to read yet
  const auto now = at_once.post_and_take();  // lag 0: this step's, at once
  ck_assert(now && !now->stop && now->loss > 0.5 && now->loss < 2.0);
  ck_assert(!at_once.drain());
  ck_assert(run_step(program, rows, std::size_t(f.batch), true, 1).ok());
  const auto first = readback.post_and_take();  // step one's, read after step two was queued
  ck_assert(first && !first->stop && first->loss == now->loss);
  ck_assert(run_step(program, rows, std::size_t(f.batch), false, 0).ok());  // the second full step: capture refused
  CK_STR_EQ(program.describe(), "eager");
  const auto second = readback.post_and_take();
  ck_assert(second && second->stop);  // the stop request travelled with step two
  const auto third = readback.drain();
  ck_assert(third && !third->stop);
  ck_assert(!readback.drain());

  // Adam counts its steps in ops memory.
  int* count = ops.alloc_int(1);
  float* m = ops.alloc(f.layout.parameters);
  float* v = ops.alloc(f.layout.parameters);
  ops.adam(f.model->parameters(), m, v, grads, f.layout.parameters, 1e-3f, 0.9f, 0.999f, 1e-8f, count);
  ops.adam(f.model->parameters(), m, v, grads, f.layout.parameters, 1e-3f, 0.9f, 0.999f, 1e-8f, count);
  ck_assert_int_eq(*count, 2);
  for (void* p : {static_cast<void*>(batch.x), static_cast<void*>(batch.labels), static_cast<void*>(grads),
                  static_cast<void*>(opt.a), static_cast<void*>(rows), static_cast<void*>(count),
                  static_cast<void*>(m), static_cast<void*>(v)})
    ops.release(p);
}
END_TEST

Suite* trainer_model_suite() {
  return make_suite("trainer_model",
                    {mlp_gradients_match_finite_differences, autoencoder_gradients_match_finite_differences,
                     linear_gradients_match_finite_differences, accumulation_equals_one_batch,
                     layout_follows_reverse_parameter_order, model_spec_defaults_and_errors,
                     step_program_steps_and_reads_back_one_step_late});
}
