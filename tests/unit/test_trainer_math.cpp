// The trainer's CPU layers: a hand-computed forward pass, and every gradient
// checked against central finite differences of the loss.
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "model/kernels.hpp"
#include "model/layers.hpp"
#include "suites.hpp"

using namespace ddp::train;

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

}  // namespace

START_TEST(linear_forward_by_hand) {
  // x = [[1, 2]], W = [[1, 0], [0, 1], [1, 1]], b = [0.5, -1, 0]  ->  y = [1.5, 1, 3]
  const float x[] = {1, 2}, w[] = {1, 0, 0, 1, 1, 1}, b[] = {0.5f, -1, 0};
  float y[3];
  cpu::linear_forward(x, w, b, y, 1, 2, 3);
  ck_assert_float_eq_tol(y[0], 1.5f, 1e-6f);
  ck_assert_float_eq_tol(y[1], 1.0f, 1e-6f);
  ck_assert_float_eq_tol(y[2], 3.0f, 1e-6f);
}
END_TEST

START_TEST(mlp_cross_entropy_gradients_match_finite_differences) {
  // x[B x 5] -> linear 5->4 -> relu -> linear 4->3 -> softmax cross-entropy
  const int B = 4, I = 5, H = 4, O = 3;
  const auto x = random_vector(B * I, 1);
  auto w1 = random_vector(H * I, 2), b1 = random_vector(H, 3), w2 = random_vector(O * H, 4), b2 = random_vector(O, 5);
  const int labels[] = {0, 2, 1, 2};
  std::vector<float> h(B * H), a(B * H), z(B * O), dz(B * O), da(B * H), dh(B * H), dx(B * I);
  const auto loss = [&] {
    cpu::linear_forward(x.data(), w1.data(), b1.data(), h.data(), B, I, H);
    cpu::relu_forward(h.data(), a.data(), h.size());
    cpu::linear_forward(a.data(), w2.data(), b2.data(), z.data(), B, H, O);
    return cpu::cross_entropy(z.data(), labels, dz.data(), B, O);
  };
  loss();
  std::vector<float> dw1(w1.size()), db1(b1.size()), dw2(w2.size()), db2(b2.size());
  cpu::linear_backward(a.data(), w2.data(), dz.data(), dw2.data(), db2.data(), da.data(), B, H, O);
  cpu::relu_backward(a.data(), da.data(), dh.data(), a.size());
  cpu::linear_backward(x.data(), w1.data(), dh.data(), dw1.data(), db1.data(), dx.data(), B, I, H);
  for (auto [p, g] : {std::pair{&w1, &dw1}, std::pair{&b1, &db1}, std::pair{&w2, &dw2}, std::pair{&b2, &db2}}) {
    const double err = worst_gradient_error(*p, *g, loss);
    ck_assert_msg(err < 0.05, "gradient mismatch %g", err);
  }
}
END_TEST

START_TEST(mse_gradient_and_value) {
  const float pred[] = {1, 2, 3}, target[] = {1, 0, 0};
  float d[3];
  ck_assert_float_eq_tol(cpu::mse(pred, target, d, 3), (0 + 4 + 9) / 3.0f, 1e-6f);
  ck_assert_float_eq_tol(d[1], 2.0f * 2 / 3, 1e-6f);
  ck_assert_float_eq_tol(d[0], 0.0f, 1e-6f);
}
END_TEST

START_TEST(optimizer_steps_by_hand) {
  float w = 1.0f, v = 0.0f;
  sgd_momentum_step(w, v, 0.5f, 0.1f, 0.9f);  // v = 0.5, w = 0.95
  sgd_momentum_step(w, v, 0.5f, 0.1f, 0.9f);  // v = 0.95, w = 0.855
  ck_assert_float_eq_tol(w, 0.855f, 1e-6f);
  float aw = 1.0f, m = 0.0f, s = 0.0f;
  adam_step(aw, m, s, -2.0f, 1e-3f, 0.9f, 0.999f, 1e-8f, adam_bias(0.9f, 0.999f, 1));  // first step: w -= lr * sign(g)
  ck_assert_float_eq_tol(aw, 1.001f, 1e-6f);
}
END_TEST

Suite* trainer_math_suite() {
  return make_suite("trainer_math", {linear_forward_by_hand, mlp_cross_entropy_gradients_match_finite_differences,
                                     mse_gradient_and_value, optimizer_steps_by_hand});
}
