// ddp-gpu-selftest's GPT part: the embeddings, LayerNorm, attention, GELU,
// the padded cross-entropy, the sum of squares and AdamW, CudaOps against
// CpuOps on the same inputs (ops_parity.cpp has the tolerance). Backward
// functions accumulate, so their outputs start non-zero. Attention keeps
// different things for backward on each side (the CPU every probability,
// CUDA each row's log-sum-exp): only what both compute is compared.
#include "selftest.hpp"

namespace ddp::gpu_selftest {

namespace {

void test_embed_and_layernorm(Selftest& t, const GptShape& s, const std::string& where) {
  const int N = s.B * s.T;
  const std::size_t rows = std::size_t(N) * s.C;
  const IntBuf tokens = t.make_ints(t.random_ints(std::size_t(N), s.V));
  const Buf wte = t.make(t.random(std::size_t(s.Vp) * s.C)), wpe = t.make(t.random(std::size_t(s.T) * s.C));
  const Buf x = t.zeros(rows);
  t.cpu_.embed_forward(x.c, tokens.c, wte.c, wpe.c, s.B, s.T, s.C);
  t.gpu_.embed_forward(x.g, tokens.g, wte.g, wpe.g, s.B, s.T, s.C);
  t.compare("embed_forward", where, x);
  const Buf dout = t.make(t.random(rows));
  t.cpu_.embed_backward(wte.c, wpe.c, dout.c, tokens.c, s.B, s.T, s.C);  // into the tables: any start will do
  t.gpu_.embed_backward(wte.g, wpe.g, dout.g, tokens.g, s.B, s.T, s.C);
  t.compare("embed_backward (dwte)", where, wte);
  t.compare("embed_backward (dwpe)", where, wpe);

  const Buf w = t.make(t.random(std::size_t(s.C))), b = t.make(t.random(std::size_t(s.C)));
  const Buf y = t.zeros(rows), mean = t.zeros(std::size_t(N)), rstd = t.zeros(std::size_t(N));
  t.cpu_.layernorm_forward(y.c, mean.c, rstd.c, x.c, w.c, b.c, N, s.C);
  t.gpu_.layernorm_forward(y.g, mean.g, rstd.g, x.g, w.g, b.g, N, s.C);
  t.compare("layernorm_forward", where, y);
  t.compare("layernorm_forward (rstd)", where, rstd);
  const Buf dx = t.make(t.random(rows)), dw = t.make(t.random(std::size_t(s.C))),
            db = t.make(t.random(std::size_t(s.C)));
  t.cpu_.layernorm_backward(dx.c, dw.c, db.c, dout.c, x.c, w.c, mean.c, rstd.c, N, s.C);
  t.gpu_.layernorm_backward(dx.g, dw.g, db.g, dout.g, x.g, w.g, mean.g, rstd.g, N, s.C);
  t.compare("layernorm_backward (dx)", where, dx);
  t.compare("layernorm_backward (dw)", where, dw);
  t.compare("layernorm_backward (db)", where, db);
}

void test_attention(Selftest& t, const GptShape& s, const std::string& where) {
  const std::size_t N = std::size_t(s.B) * s.T;
  const Buf qkv = t.make(t.random(3 * N * s.C, -2.0f, 2.0f)), out = t.zeros(N * s.C);
  float* cpu_saved = t.cpu_.alloc(t.cpu_.attention_saved(s.B, s.T, s.NH));
  float* gpu_saved = t.gpu_.alloc(t.gpu_.attention_saved(s.B, s.T, s.NH));
  t.cpu_.attention_forward(out.c, cpu_saved, qkv.c, s.B, s.T, s.C, s.NH);
  t.gpu_.attention_forward(out.g, gpu_saved, qkv.g, s.B, s.T, s.C, s.NH);
  t.compare("attention_forward", where, out);
  const Buf dout = t.make(t.random(N * s.C)), dqkv = t.make(t.random(3 * N * s.C));
  t.cpu_.attention_backward(dqkv.c, dout.c, out.c, qkv.c, cpu_saved, s.B, s.T, s.C, s.NH);
  t.gpu_.attention_backward(dqkv.g, dout.g, out.g, qkv.g, gpu_saved, s.B, s.T, s.C, s.NH);
  t.compare("attention_backward", where, dqkv);
  t.cpu_.release(cpu_saved);
  t.gpu_.release(gpu_saved);
}

void test_gelu_loss_and_adamw(Selftest& t, const GptShape& s, const std::string& where) {
  const int N = s.B * s.T;
  const std::size_t n = std::size_t(N) * 4 * s.C;
  const Buf x = t.make(t.random(n, -4.0f, 4.0f)), y = t.zeros(n), dx = t.make(t.random(n)), dy = t.make(t.random(n));
  t.cpu_.gelu_forward(y.c, x.c, n);
  t.gpu_.gelu_forward(y.g, x.g, n);
  t.compare("gelu_forward", where, y);
  t.cpu_.gelu_backward(dx.c, x.c, dy.c, n);
  t.gpu_.gelu_backward(dx.g, x.g, dy.g, n);
  t.compare("gelu_backward", where, dx);

  const std::size_t nl = std::size_t(N) * s.Vp;
  const Buf logits = t.make(t.random(nl, -6.0f, 6.0f)), dlogits = t.make(t.random(nl)), loss = t.make({0.5f});
  const IntBuf targets = t.make_ints(t.random_ints(std::size_t(N), s.V));
  t.cpu_.cross_entropy_padded(logits.c, targets.c, dlogits.c, N, s.V, s.Vp, loss.c);
  t.gpu_.cross_entropy_padded(logits.g, targets.g, dlogits.g, N, s.V, s.Vp, loss.g);
  t.compare("cross_entropy_padded", where, dlogits);
  t.compare("cross_entropy_padded (loss)", where, loss);

  const Buf squares = t.make({1.0f});
  t.cpu_.sum_squares(dlogits.c, nl, squares.c);
  t.gpu_.sum_squares(dlogits.g, nl, squares.g);
  t.compare("sum_squares", where, squares);

  const std::size_t np = std::size_t(s.C) * s.C + 7;
  std::vector<float> mask = t.random(np, 0.0f, 2.0f);
  for (float& m : mask) m = m < 1.0f ? 0.0f : 1.0f;
  const Buf w = t.make(t.random(np)), m = t.zeros(np), v = t.zeros(np), decay = t.make(mask);
  const IntBuf step = t.make_ints({0});
  for (int k = 0; k < 3; ++k) {
    const Buf g = t.make(t.random(np));
    t.cpu_.adamw(w.c, m.c, v.c, g.c, decay.c, np, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, step.c);
    t.gpu_.adamw(w.g, m.g, v.g, g.g, decay.g, np, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, step.g);
  }
  t.compare("adamw (weights)", where, w);
  t.compare("adamw (m)", where, m);
  t.compare("adamw (v)", where, v);
}

}  // namespace

void test_gpt(Selftest& t, const GptShape& s) {
  const std::string where = "B " + std::to_string(s.B) + ", T " + std::to_string(s.T) + ", C " + std::to_string(s.C) +
                            ", " + std::to_string(s.NH) + " heads, vocabulary " + std::to_string(s.V) + " of " +
                            std::to_string(s.Vp);
  test_embed_and_layernorm(t, s, where);
  test_attention(t, s, where);
  test_gelu_loss_and_adamw(t, s, where);
  t.release_all();
}

}  // namespace ddp::gpu_selftest
