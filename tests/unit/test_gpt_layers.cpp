// The GPT layers' backward against central finite differences of their
// forward (loss = sum of the output times a fixed random tensor, so that
// dout is that tensor), and what each forward must be by definition: causal
// attention's weights, GELU's ends, the padded vocabulary left out.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <vector>

#include "data/gzip_file.hpp"
#include "model/gpt.hpp"
#include "model/gpt_layers.hpp"
#include "model/kernels.hpp"
#include "model/ops.hpp"
#include "suites.hpp"
#include "train/lr_schedule.hpp"

using namespace ddp::train;
using namespace ddp::train::gpt;

namespace {

std::vector<float> gaussian_vector(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(gen);
  return v;
}

double dot_product(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a[i]) * double(b[i]);
  return s;
}

}  // namespace

START_TEST(layernorm_backward_matches_finite_differences) {
  const int N = 3, C = 8;
  auto x = gaussian_vector(N * C, 1), w = gaussian_vector(C, 2), b = gaussian_vector(C, 3),
       r = gaussian_vector(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N);
  const auto loss = [&] {
    layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    return dot_product(out, r);
  };
  loss();
  std::vector<float> dx(N * C), dw(C), db(C);
  layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  ck_assert_double_lt(worst_gradient_error(x, dx, loss), 1e-2);
  ck_assert_double_lt(worst_gradient_error(w, dw, loss), 1e-2);
  ck_assert_double_lt(worst_gradient_error(b, db, loss), 1e-2);
  for (int c = 0; c < C; ++c) w[c] = 1, b[c] = 0;  // plain normalisation: each row's mean 0, variance 1
  loss();
  double m = 0, v = 0;
  for (int c = 0; c < C; ++c) m += out[c], v += double(out[c]) * out[c];
  ck_assert_double_lt(std::fabs(m / C), 1e-5);
  ck_assert_double_lt(std::fabs(v / C - 1.0), 1e-3);
}
END_TEST

START_TEST(attention_is_causal_and_its_backward_matches_finite_differences) {
  const int B = 2, T = 5, C = 8, NH = 2;
  auto qkv = gaussian_vector(B * T * 3 * C, 5), r = gaussian_vector(B * T * C, 6);
  std::vector<float> out(B * T * C), probs(B * NH * T * T);
  const auto loss = [&] {
    attention_forward(out.data(), probs.data(), qkv.data(), B, T, C, NH);
    return dot_product(out, r);
  };
  loss();
  for (int row = 0; row < B * NH * T; ++row) {  // each query: weights over keys up to its own position, summing to 1
    const int t = row % T;
    double sum = 0;
    for (int u = 0; u < T; ++u) {
      const float p = probs[std::size_t(row) * T + u];
      if (u > t) ck_assert_float_eq(p, 0.0f);
      sum += p;
    }
    ck_assert_double_lt(std::fabs(sum - 1.0), 1e-5);
  }
  // The first position sees only itself: its output is its own value.
  for (int i = 0; i < C; ++i) ck_assert_float_eq_tol(out[i], qkv[2 * C + i], 1e-6f);
  std::vector<float> dqkv(qkv.size()), scratch(T);
  attention_backward(dqkv.data(), r.data(), qkv.data(), probs.data(), scratch.data(), B, T, C, NH);
  ck_assert_double_lt(worst_gradient_error(qkv, dqkv, loss), 1e-2);
}
END_TEST

START_TEST(gelu_and_embedding_backward_match_finite_differences) {
  auto x = gaussian_vector(40, 7, 2.0f), r = gaussian_vector(40, 8);
  std::vector<float> out(40), dx(40);
  const auto gelu_loss = [&] {
    gelu_forward(out.data(), x.data(), x.size());
    return dot_product(out, r);
  };
  gelu_backward(dx.data(), x.data(), r.data(), x.size());
  ck_assert_double_lt(worst_gradient_error(x, dx, gelu_loss), 1e-2);
  const float ends[] = {0.0f, 10.0f, -10.0f};
  float at_ends[3];
  gelu_forward(at_ends, ends, 3);
  ck_assert_float_eq(at_ends[0], 0.0f);
  ck_assert_float_eq_tol(at_ends[1], 10.0f, 1e-5f);
  ck_assert_float_eq_tol(at_ends[2], 0.0f, 1e-5f);

  const int B = 2, T = 3, C = 4, V = 5;
  const std::uint16_t tokens[] = {4, 0, 4, 2, 2, 1};
  auto wte = gaussian_vector(V * C, 9), wpe = gaussian_vector(T * C, 10), re = gaussian_vector(B * T * C, 11);
  std::vector<float> emb(B * T * C), dwte(V * C), dwpe(T * C);
  const auto embed_loss = [&] {
    embed_forward(emb.data(), tokens, wte.data(), wpe.data(), B, T, C);
    return dot_product(emb, re);
  };
  embed_backward(dwte.data(), dwpe.data(), re.data(), tokens, B, T, C);
  ck_assert_double_lt(worst_gradient_error(wte, dwte, embed_loss), 1e-3);
  ck_assert_double_lt(worst_gradient_error(wpe, dwpe, embed_loss), 1e-3);
}
END_TEST

START_TEST(the_padded_vocabulary_takes_no_part_in_the_loss) {
  const int N = 4, V = 7, Vp = 9;
  auto logits = gaussian_vector(N * Vp, 12, 2.0f);
  const std::uint16_t targets[] = {0, 6, 3, 3};
  std::vector<float> d(N * Vp), scratch(N * Vp);
  const float l = cross_entropy_padded(logits.data(), targets, d.data(), N, V, Vp);
  const auto loss = [&] { return double(cross_entropy_padded(logits.data(), targets, scratch.data(), N, V, Vp)); };
  ck_assert_double_lt(worst_gradient_error(logits, d, loss), 1e-2);
  double by_hand = 0;  // the definition, in double
  for (int n = 0; n < N; ++n) {
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(double(logits[n * Vp + v]));
    by_hand -= double(logits[n * Vp + targets[n]]) - std::log(sum);
  }
  ck_assert_double_lt(std::fabs(by_hand / N - l), 1e-5);
  for (int n = 0; n < N; ++n) {
    ck_assert_float_eq(d[n * Vp + V], 0.0f);
    logits[n * Vp + V + 1] = 1e6f;  // a padded column, however large, changes nothing
  }
  ck_assert_float_eq(cross_entropy_padded(logits.data(), targets, d.data(), N, V, Vp), l);
}
END_TEST

START_TEST(gpt2_124m_has_its_parameters_and_bad_shapes_are_refused) {
  auto c = gpt_config("gpt2-124m", 0, 0, 0, 0, 0);
  ck_assert(c);
  ck_assert_int_eq(c->padded_vocab, 50304);
  ck_assert_uint_eq(gpt_layout(*c).total, 124475904);  // 124,439,808 of GPT-2 124M, plus 47 padded rows of 768
  CK_STR_EQ(c->describe(), "gpt 12 layers, 12 heads, width 768, context 1024, vocabulary 50257 (padded 50304)");
  auto small = gpt_config("small", 0, 0, 0, 0, 0);
  ck_assert(small && small->layers == 2 && small->width == 128 && small->padded_vocab == 256);
  CK_CONTAINS(gpt_config("small", 0, 5, 0, 0, 0).error(), "--gpt-heads 5 does not divide --gpt-width 128");
  CK_CONTAINS(gpt_config("small", 0, 0, 0, 0, 70000).error(), "at most 65,536");
  CK_CONTAINS(gpt_config("gpt3", 0, 0, 0, 0, 0).error(), "gpt2-124m or small");
  const auto p = initial_gpt_parameters(*small, 1);
  ck_assert(p == initial_gpt_parameters(*small, 1));
  ck_assert_float_eq(p[gpt_layout(*small).blocks[1].ln2_w], 1.0f);
}
END_TEST

// The whole model: every parameter's gradient against central differences of
// the loss, on a tiny shape (2 layers, 2 heads, width 8, context 4, a
// vocabulary of 11 padded to 64).
START_TEST(the_gpt_gradient_matches_finite_differences) {
  auto c = gpt_config("small", 2, 2, 8, 4, 11);
  ck_assert(c && c->padded_vocab == 64);
  const int B = 2, T = 4;
  auto params = initial_gpt_parameters(*c, 7);
  const auto noise = gaussian_vector(params.size(), 13, 0.3f);
  const GptLayout layout = gpt_layout(*c);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (i < layout.wte + std::size_t(c->vocab) * 8 || i >= layout.wpe) params[i] += noise[i];  // padded rows stay 0
  const std::uint16_t tokens[] = {1, 5, 10, 0, 3, 3, 7, 2}, targets[] = {5, 10, 0, 9, 3, 7, 2, 4};
  const auto ops = make_cpu_ops(1);  // its memory is the host's: the vectors below are ops memory
  GptModel model(*ops, *c, B);
  const auto loss = [&] { return double(model.forward(params.data(), tokens, targets, B, T)); };
  const double at_start = loss();
  std::vector<float> grads(params.size(), 0.0f);
  model.backward(params.data(), grads.data());
  ck_assert_double_lt(worst_gradient_error(params, grads, loss, 1e-2f), 2e-2);
  for (std::size_t i = layout.wte + std::size_t(c->vocab) * 8; i < layout.wpe; ++i) ck_assert_float_eq(grads[i], 0.0f);
  ck_assert_double_eq_tol(loss(), at_start, 1e-6);  // forward is a function of its inputs
}
END_TEST

// At initialisation the model knows nothing: the loss is about ln(vocabulary).
START_TEST(an_untrained_gpt_is_uniform) {
  auto c = gpt_config("small", 0, 0, 0, 0, 0);
  const auto params = initial_gpt_parameters(*c, 3);
  std::vector<std::uint16_t> tokens(2 * 64), targets(2 * 64);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = std::uint16_t(i * 37 % 256), targets[i] = std::uint16_t(i * 11 % 256);
  const auto ops = make_cpu_ops(1);
  GptModel model(*ops, *c, 2);
  const float l = model.forward(params.data(), tokens.data(), targets.data(), 2, 64);
  ck_assert_double_lt(std::fabs(double(l) - std::log(256.0)), 0.05);
}
END_TEST

// nanoGPT's count for GPT-2 124M: 50 tensors decayed (124,354,560
// parameters), 98 not (121,344).
START_TEST(adamw_decays_matrices_and_embeddings_only) {
  const auto c = gpt_config("gpt2-124m", 0, 0, 0, 0, 0);
  const auto layout = gpt_layout(*c);
  const auto ranges = gpt_decayed(layout, *c);
  std::size_t decayed = 0;
  for (const auto& r : ranges) decayed += r.end - r.begin;
  ck_assert_uint_eq(ranges.size(), 49);  // wte and wpe side by side: one range for nanoGPT's two tensors
  ck_assert_uint_eq(decayed, 124354560);
  ck_assert_uint_eq(layout.total - decayed, 121344);
}
END_TEST

// Five AdamW steps (weight decay 0.1) against torch.optim.AdamW of Debian's
// PyTorch, with the same gradients.
START_TEST(adamw_is_pytorchs) {
  const float lr = 1e-2f, wd = 0.1f;
  std::vector<float> w = {0.5f, -1.0f, 2.0f}, m(3), v(3);
  const float grads[5][3] = {
      {0.1f, -0.2f, 0.3f}, {0.0f, 0.5f, -0.1f}, {1.0f, 1.0f, 1.0f}, {-0.3f, 0.2f, 0.0f}, {0.2f, 0.2f, -0.2f}};
  for (int t = 1; t <= 5; ++t)
    for (int i = 0; i < 3; ++i)
      adamw_step(w[i], m[i], v[i], grads[t - 1][i], lr, 0.9f, 0.95f, 1e-8f, wd, adam_bias(0.9f, 0.95f, t));
  FILE* p = popen(
      "/usr/bin/python3 -c '"
      "import torch\n"
      "w = torch.nn.Parameter(torch.tensor([0.5, -1.0, 2.0]))\n"
      "o = torch.optim.AdamW([w], lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)\n"
      "for g in [[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [1.0, 1.0, 1.0], [-0.3, 0.2, 0.0], [0.2, 0.2, -0.2]]:\n"
      "    w.grad = torch.tensor(g); o.step()\n"
      "print(\" \".join(repr(float(x)) for x in w.detach()))'",
      "r");
  ck_assert_ptr_nonnull(p);
  double torch_w[3] = {};
  ck_assert_int_eq(std::fscanf(p, "%lf %lf %lf", &torch_w[0], &torch_w[1], &torch_w[2]), 3);
  ck_assert_int_eq(pclose(p), 0);
  for (int i = 0; i < 3; ++i) ck_assert_double_lt(std::fabs(torch_w[i] - w[i]), 1e-6);
}
END_TEST

START_TEST(the_learning_rate_warms_up_then_follows_a_cosine) {
  const WarmupCosine s{1.0f, 0.1f, 10, 110};
  ck_assert_float_eq_tol(s.at(0), 0.1f, 1e-7f);
  ck_assert_float_eq_tol(s.at(9), 1.0f, 1e-7f);
  ck_assert_float_eq_tol(s.at(10), 1.0f, 1e-7f);
  ck_assert_float_eq_tol(s.at(60), 0.55f, 1e-6f);  // half-way down the cosine
  ck_assert_float_eq_tol(s.at(110), 0.1f, 1e-7f);
  ck_assert_float_eq_tol(s.at(1000), 0.1f, 1e-7f);
  ck_assert_float_eq_tol(clip_factor(2.0, 1.0f), 0.5f, 1e-6f);
  ck_assert_float_eq(clip_factor(0.5, 1.0f), 1.0f);
  ck_assert_float_eq(clip_factor(1e9, 0.0f), 1.0f);  // no clipping asked
}
END_TEST

namespace {

// `steps` AdamW steps (lr const, weight decay 0.1 on gpt_decayed(), betas 0.9
// and 0.95, gradients clipped to norm 1), each step's loss before its update.
std::vector<float> train_steps(const GptConfig& c, std::vector<float> params, const std::uint16_t* tokens,
                               const std::uint16_t* targets, int B, int T, int steps, float lr) {
  const auto ops = make_cpu_ops(1);
  GptModel model(*ops, c, B);
  std::vector<float> wd(params.size(), 0.0f), m(params.size()), v(params.size()), g(params.size());
  for (const auto& r : gpt_decayed(model.layout(), c))
    std::fill(wd.begin() + std::ptrdiff_t(r.begin), wd.begin() + std::ptrdiff_t(r.end), 0.1f);
  std::vector<float> losses;
  for (int step = 1; step <= steps; ++step) {
    std::fill(g.begin(), g.end(), 0.0f);
    losses.push_back(model.forward(params.data(), tokens, targets, B, T));
    model.backward(params.data(), g.data());
    double norm = 0;
    for (const float x : g) norm += double(x) * x;
    const float clip = clip_factor(std::sqrt(norm), 1.0f);
    const auto bias = adam_bias(0.9f, 0.95f, step);
    for (std::size_t i = 0; i < params.size(); ++i)
      adamw_step(params[i], m[i], v[i], g[i] * clip, lr, 0.9f, 0.95f, 1e-8f, wd[i], bias);
  }
  return losses;
}

std::string joined(const std::uint16_t* x, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? "," : "") + std::to_string(x[i]);
  return out;
}

}  // namespace

// The small config (2 layers, 4 heads, width 128, context 64) on the
// first bytes of fortune's cookies, from the same initial parameters: each step's
// loss equal to the same model's in PyTorch (tests/unit/gpt_reference.py,
// with Debian's PyTorch here, 2.6 and 2.14 in the chroots).
START_TEST(the_small_gpt_trains_as_in_pytorch) {
  const auto c = gpt_config("small", 0, 0, 0, 0, 0);
  const int B = 2, T = 64, steps = 5;
  const float lr = 1e-3f;
  auto text = read_maybe_gzip("/usr/share/games/fortunes/cookie", std::size_t(64) << 20);
  ck_assert(text);
  std::vector<std::uint16_t> tokens(B * T), targets(B * T);
  for (int i = 0; i < B * T; ++i) tokens[i] = (*text)[std::size_t(i)], targets[i] = (*text)[std::size_t(i) + 1];
  const auto params = initial_gpt_parameters(*c, 42);
  const auto ours = train_steps(*c, params, tokens.data(), targets.data(), B, T, steps, lr);
  const std::string path = "/tmp/ddp-gpt-params-" + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(params.data()), std::streamsize(params.size() * sizeof(float)));
  std::ostringstream cmd;
  cmd << "/usr/bin/python3 " << DDP_GPT_REFERENCE << " " << path << " " << c->layers << " " << c->heads << " "
      << c->width << " " << c->context << " " << c->vocab << " " << c->padded_vocab << " " << B << " " << T << " "
      << steps << " " << lr << " " << joined(tokens.data(), B * T) << " " << joined(targets.data(), B * T);
  FILE* p = popen(cmd.str().c_str(), "r");
  ck_assert_ptr_nonnull(p);
  std::vector<double> torch_losses(steps);
  for (auto& l : torch_losses) ck_assert_int_eq(std::fscanf(p, "%lf", &l), 1);
  ck_assert_int_eq(pclose(p), 0);
  std::remove(path.c_str());
  for (int s = 0; s < steps; ++s) {
    std::printf("step %d: loss %.6f, PyTorch %.6f\n", s, double(ours[std::size_t(s)]), torch_losses[std::size_t(s)]);
    ck_assert_double_lt(std::fabs(torch_losses[std::size_t(s)] - ours[std::size_t(s)]), 1e-4);
  }
  ck_assert_float_lt(ours.back(), ours.front());  // and it learns
}
END_TEST

// The GPT's Ops on the CPU (the reference ddp-gpu-selftest holds CUDA's to):
// AdamW with the clip factor and the decay mask, its step counted in ops
// memory, is adamw_step's loop; the sum of squares is the squared norm.
START_TEST(the_cpu_ops_adamw_and_sum_of_squares_are_the_trainers) {
  const auto ops = make_cpu_ops(1);
  std::vector<float> w = {0.5f, -1.0f, 2.0f}, m(3), v(3), g = {0.1f, -0.2f, 0.3f}, decay = {1.0f, 0.0f, 1.0f};
  std::vector<float> w2 = w, m2(3), v2(3);
  int step = 0;
  for (int t = 1; t <= 3; ++t) {
    ops->adamw(w.data(), m.data(), v.data(), g.data(), decay.data(), 3, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, &step);
    for (int i = 0; i < 3; ++i)
      adamw_step(w2[i], m2[i], v2[i], g[i] * 0.5f, 1e-2f, 0.9f, 0.95f, 1e-8f, decay[i] * 0.1f,
                 adam_bias(0.9f, 0.95f, t));
  }
  ck_assert_int_eq(step, 3);
  for (int i = 0; i < 3; ++i) ck_assert_float_eq(w[i], w2[i]);
  float acc = 1.0f;
  ops->sum_squares(g.data(), 3, &acc);
  ck_assert_float_eq_tol(acc, 1.0f + 0.01f + 0.04f + 0.09f, 1e-6f);
}
END_TEST

Suite* gpt_layers_suite() {
  return make_suite(
      "gpt_layers",
      {layernorm_backward_matches_finite_differences, attention_is_causal_and_its_backward_matches_finite_differences,
       gelu_and_embedding_backward_match_finite_differences, the_padded_vocabulary_takes_no_part_in_the_loss,
       gpt2_124m_has_its_parameters_and_bad_shapes_are_refused, the_gpt_gradient_matches_finite_differences,
       an_untrained_gpt_is_uniform, adamw_decays_matrices_and_embeddings_only, adamw_is_pytorchs,
       the_learning_rate_warms_up_then_follows_a_cosine, the_small_gpt_trains_as_in_pytorch,
       the_cpu_ops_adamw_and_sum_of_squares_are_the_trainers},
      30);
}
