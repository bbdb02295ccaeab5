// The CNN on the CPU backend (model/cnn.hpp, model/conv_layers.cpp): every
// layer's gradient against finite differences through Model and CpuOps, on a
// small network of the same structure (dropout on, its coins fixed by the
// key); the convolution against the definition; pooling's ties; dropout's
// coins; Adadelta's step against PyTorch's formula; the shapes and defaults.
#include <cmath>
#include <random>
#include <vector>

#include "model/conv_layers.hpp"
#include "model/kernels.hpp"
#include "model/layout.hpp"
#include "model/model.hpp"
#include "model/ops.hpp"
#include "train/setup.hpp"

#include "suites.hpp"  // last: check.h's fail() macro would break <istream> and Result's fail()

using namespace ddp::train;

namespace {

// 1 x 8 x 8 images, conv 2 and 3 channels, pooled 3 x 2 x 2, hidden 5, 3 classes.
ModelSpec small_cnn() {
  ModelSpec spec;
  spec.kind = ModelKind::cnn;
  spec.cnn = CnnSpec{1, 8, 8, 2, 3, 3, 5, 3, 0.25f, 0.5f};
  spec.dims = {64, 3};
  return spec;
}

struct CnnFixture {
  ModelSpec spec = small_cnn();
  ParamLayout layout = plan_layout(spec.param_layers(), 64, 256);
  std::unique_ptr<Ops> ops = make_cpu_ops(1);
  std::unique_ptr<Model> model;
  std::vector<float> x;
  std::vector<int> labels, samples;
  int round = 5, batch = 4;
  DropoutKey key;

  CnnFixture() {
    model = std::make_unique<Model>(spec, layout, *ops, batch);
    const auto init = initial_parameters(spec, layout, 11);
    ops->upload(model->parameters(), init.data(), layout.total);
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    x.resize(std::size_t(batch) * 64);
    for (auto& v : x) v = u(gen);
    labels = {0, 2, 1, 2};
    samples = {17, 3, 40, 8};
    key = DropoutKey{99, 0, &round, samples.data()};
  }
  float loss() {
    float acc = 0;
    model->forward(x.data(), batch, &key);
    ops->cross_entropy(model->output(), labels.data(), model->output_grad(), batch, 3, 1.0f, &acc);
    return acc;
  }
};

}  // namespace

START_TEST(cnn_gradients_match_finite_differences) {
  CnnFixture f;
  std::vector<float> grads(f.layout.total, 0.0f);
  f.loss();
  f.model->backward(f.x.data(), f.batch, grads.data(), [](int) {});
  float* p = f.model->parameters();
  const float h = 1e-3f;
  double worst = 0;
  for (std::size_t i = 0; i < f.layout.parameters; ++i) {
    const float keep = p[i];
    p[i] = keep + h;
    const double up = f.loss();
    p[i] = keep - h;
    const double down = f.loss();
    p[i] = keep;
    const double numeric = (up - down) / (2.0 * h);
    worst = std::max(worst, std::fabs(numeric - grads[i]) / std::max(1e-2, std::fabs(numeric) + std::fabs(grads[i])));
  }
  ck_assert_msg(worst < 0.05, "worst relative gradient error %g over %zu parameters", worst, f.layout.parameters);
}
END_TEST

namespace {

// conv2d_forward and conv2d_backward of 2 images against the sums that define them.
void check_convolution(const ConvShape& s) {
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int n = 2, oh = s.out_h(), ow = s.out_w(), k = s.k;
  std::vector<float> x(n * s.in_size()), w(s.weights()), b(s.out_c), y(n * s.out_size()), dy(n * s.out_size());
  std::vector<float> dw(s.weights(), 0.0f), db(s.out_c, 0.0f), dx(n * s.in_size()), cols(cpu::conv_scratch(s));
  for (auto* v : {&x, &w, &b, &dy})
    for (auto& e : *v) e = u(gen);
  cpu::conv2d_forward(x.data(), w.data(), b.data(), y.data(), cols.data(), n, s);
  cpu::conv2d_backward(x.data(), w.data(), dy.data(), dw.data(), db.data(), dx.data(), cols.data(), n, s);
  auto X = [&](int i, int c, int r, int q) { return double(x[i * s.in_size() + (c * s.in_h + r) * s.in_w + q]); };
  auto W = [&](int o, int c, int i, int j) { return double(w[((o * s.in_c + c) * k + i) * k + j]); };
  auto DY = [&](int i, int o, int r, int q) { return double(dy[i * s.out_size() + (o * oh + r) * ow + q]); };
  std::vector<double> want_dx(dx.size(), 0.0), want_dw(dw.size(), 0.0);
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < s.out_c; ++o)
      for (int r = 0; r < oh; ++r)
        for (int q = 0; q < ow; ++q) {
          double sum = b[o];
          for (int c = 0; c < s.in_c; ++c)
            for (int a = 0; a < k; ++a)
              for (int e = 0; e < k; ++e) {
                sum += W(o, c, a, e) * X(i, c, r + a, q + e);
                want_dw[((o * s.in_c + c) * k + a) * k + e] += DY(i, o, r, q) * X(i, c, r + a, q + e);
                want_dx[i * s.in_size() + (c * s.in_h + r + a) * s.in_w + q + e] += DY(i, o, r, q) * W(o, c, a, e);
              }
          worst = std::max(worst, std::fabs(y[i * s.out_size() + (o * oh + r) * ow + q] - sum));
        }
  for (std::size_t i = 0; i < dw.size(); ++i) worst = std::max(worst, std::fabs(dw[i] - want_dw[i]));
  for (std::size_t i = 0; i < dx.size(); ++i) worst = std::max(worst, std::fabs(dx[i] - want_dx[i]));
  ck_assert_msg(worst < 1e-3, "%dx%dx%d -> %d: worst difference %g from the definition", s.in_c, s.in_h, s.in_w,
                s.out_c, worst);
}

}  // namespace

START_TEST(convolution_is_the_definition) {
  check_convolution({2, 5, 6, 3, 3});
  check_convolution({64, 12, 10, 3, 3});
}
END_TEST

START_TEST(pooling_takes_the_first_maximum_and_routes_back) {
  // One 2 x 6 plane: windows {1, 7 | 7, 2}, {3, 3 | 0, 3} and {-1, -2 | -3, -1}.
  const std::vector<float> x = {1, 7, 3, 3, -1, -2, 7, 2, 0, 3, -3, -1};
  std::vector<float> y(3), dx(12);
  std::vector<int> where(3);
  cpu::relu_max_pool2_forward(x.data(), y.data(), where.data(), 1, 2, 6);
  ck_assert(y[0] == 7 && y[1] == 3 && y[2] == 0);  // ReLU's zero where nothing is positive
  ck_assert_int_eq(where[0], 1);                   // row-major: the 7 of the first row, as PyTorch
  ck_assert_int_eq(where[1], 2);
  ck_assert_int_eq(where[2], -1);
  const std::vector<float> dy = {10, 20, 30};
  cpu::relu_max_pool2_backward(dy.data(), where.data(), dx.data(), 1, 2, 6);
  ck_assert(dx == (std::vector<float>{0, 10, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0}));  // none through ReLU's zero
}
END_TEST

START_TEST(dropout_coins_belong_to_the_sample) {
  int round = 7;
  const std::vector<int> a = {4, 9}, b = {9, 4};  // the same samples, in the other rows
  const int width = 4000;
  std::vector<float> x(2 * width, 1.0f), y1(2 * width), m1(2 * width), y2(2 * width), m2(2 * width);
  cpu::dropout_forward(x.data(), y1.data(), m1.data(), 2, width, 0.25f, {3, 0, &round, a.data()});
  cpu::dropout_forward(x.data(), y2.data(), m2.data(), 2, width, 0.25f, {3, 0, &round, b.data()});
  int dropped = 0, same_row_differs = 0;
  for (int u = 0; u < width; ++u) {
    ck_assert(m1[u] == m2[width + u] && m1[width + u] == m2[u]);  // sample 4's coins wherever it runs
    ck_assert(m1[u] == 0.0f || std::fabs(m1[u] - 1.0f / 0.75f) < 1e-6f);
    dropped += m1[u] == 0.0f;
    same_row_differs += m1[u] != m1[width + u];
  }
  ck_assert_msg(dropped > 850 && dropped < 1150, "dropped %d of %d at p 0.25", dropped, width);
  ck_assert(same_row_differs > 1000);  // two samples, two masks
  round = 8;
  cpu::dropout_forward(x.data(), y2.data(), m2.data(), 2, width, 0.25f, {3, 0, &round, a.data()});
  ck_assert(m1 != m2);  // the next step, other coins
  ck_assert(dropout_scale(3, 1, 7, 4, 0, 0.0f) == 1.0f);  // p 0: nothing dropped
}
END_TEST

START_TEST(adadelta_is_pytorchs) {
  auto ops = make_cpu_ops(1);
  std::vector<float> w = {1.0f, -2.0f}, sq(2, 0.0f), acc(2, 0.0f);
  const std::vector<float> g1 = {0.5f, -1.0f}, g2 = {0.25f, 2.0f};
  double ew[2] = {1.0, -2.0}, esq[2] = {0, 0}, eacc[2] = {0, 0};
  for (const auto* g : {&g1, &g2}) {
    ops->adadelta(w.data(), sq.data(), acc.data(), g->data(), 2, 1.0f, 0.9, 1e-6f);
    for (int i = 0; i < 2; ++i) {  // torch/optim/adadelta.py, by hand in double
      esq[i] = 0.9 * esq[i] + 0.1 * (*g)[i] * (*g)[i];
      const double delta = std::sqrt(eacc[i] + 1e-6) / std::sqrt(esq[i] + 1e-6) * (*g)[i];
      eacc[i] = 0.9 * eacc[i] + 0.1 * delta * delta;
      ew[i] -= delta;
    }
  }
  for (int i = 0; i < 2; ++i) ck_assert_msg(std::fabs(w[i] - ew[i]) < 1e-6, "w[%d] %g, expected %g", i, w[i], ew[i]);
}
END_TEST

START_TEST(the_cnn_is_the_tutorials) {
  auto spec = make_model_spec("cnn", {}, false, 784, 10);
  ck_assert(spec.ok());
  std::size_t params = 0;
  for (const auto& l : spec->param_layers()) params += l.weights + l.biases;
  ck_assert_uint_eq(params, 1199882);  // PyTorch's Net: sum(p.numel() for p in model.parameters())
  CK_STR_EQ(spec->describe(), "cnn 1x28x28 conv32-conv64-pool-dropout-128-dropout-10 (cross-entropy)");
  CK_CONTAINS(make_model_spec("cnn", {}, false, 20, 10).error(), "takes 28 x 28 images");
  CK_CONTAINS(make_model_spec("cnn", {64}, true, 784, 10).error(), "drop --hidden");
  TrainOptions o;
  o.model = "cnn";
  Dataset train;
  train.rows = 1000, train.width = 784, train.classes = 10;
  auto plan = plan_run(o, 2, train);
  ck_assert(plan.ok());
  CK_STR_EQ(plan->optimizer, "adadelta");
  ck_assert(plan->lr == 1.0f && std::fabs(plan->lr_at(2) - 0.49f) < 1e-6f);  // StepLR, gamma 0.7
  o.device = "cuda";
  CK_CONTAINS(plan_run(o, 2, train).error(), "--model cnn runs on --device cpu");
}
END_TEST

Suite* trainer_cnn_suite() {
  return make_suite("trainer_cnn", {cnn_gradients_match_finite_differences, convolution_is_the_definition,
                                    pooling_takes_the_first_maximum_and_routes_back, dropout_coins_belong_to_the_sample,
                                    adadelta_is_pytorchs, the_cnn_is_the_tutorials});
}
