// Ops on the host: OpenBLAS sgemm for the products, loops over the shared
// elementwise kernels (model/kernels.hpp) for the rest. Everything runs at
// once on the calling thread, so synchronize() has nothing to wait for.
#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

#include "model/conv_layers.hpp"
#include "model/cpu_optimizers.hpp"
#include "model/gpt_layers.hpp"
#include "model/kernels.hpp"
#include "model/layers.hpp"
#include "model/ops.hpp"

namespace ddp::train {
namespace {

// Subnormal floats cost about a hundred times a normal operation on x86
// cores, and training reaches them: the autoencoder's small gradients and
// Adam moments turn subnormal within an epoch, which would make each later
// epoch several times slower than the first. They are flushed to zero (FTZ)
// and read as zero (DAZ), as TensorFlow and oneDNN do by default (PyTorch:
// torch.set_flush_denormal(True)); the trained models reach the same test
// metrics (doc/trainer.md, Numerics). The setting is per thread: this one,
// and threads it starts later.
void flush_subnormals_to_zero() {
#if defined(__x86_64__) || defined(__i386__)
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#elif defined(__aarch64__)
  std::uint64_t fpcr = 0;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  asm volatile("msr fpcr, %0" : : "r"(fpcr | (std::uint64_t(1) << 24)));  // FZ
#endif
}

class CpuOps final : public Ops {
 public:
  explicit CpuOps(int threads) : threads_(threads) {
    flush_subnormals_to_zero();
    // One BLAS thread per worker by default: a node runs one worker per core
    // group, and oversubscribed BLAS threads cost more than they give.
    openblas_set_num_threads(threads);
  }
  std::string name() const override {
    return "cpu (" + std::string(openblas_get_config()) + ", " + std::to_string(threads_) + " thread" +
           (threads_ == 1 ? "" : "s") + ")";
  }

  float* alloc(std::size_t n) override { return static_cast<float*>(zeroed(n * sizeof(float))); }
  int* alloc_int(std::size_t n) override { return static_cast<int*>(zeroed(n * sizeof(int))); }
  void release(void* p) override { std::free(p); }
  float* alloc_host(std::size_t n) override { return alloc(n); }
  void release_host(float* p) override { std::free(p); }

  void upload(float* dst, const float* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void upload_int(int* dst, const int* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void download(float* dst, const float* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void download_async(float* dst, const float* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void synchronize() override {}
  void fence(int) override {}
  void wait_fence(int) override {}

  void fill(float* x, float value, std::size_t n) override { std::fill(x, x + n, value); }
  void copy(float* dst, const float* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void copy_int(int* dst, const int* src, std::size_t n) override { std::copy(src, src + n, dst); }
  void scale(float* x, float factor, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) x[i] *= factor;
  }
  void add(float* acc, const float* x, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) acc[i] += x[i];
  }

  void gather_rows(const float* table, const int* index, int count, int row, float* out) override {
    for (int i = 0; i < count; ++i)
      std::memcpy(out + std::size_t(i) * row, table + std::size_t(index[i]) * row, sizeof(float) * row);
  }
  void gather_labels(const int* table, const int* index, int count, int* out) override {
    for (int i = 0; i < count; ++i) out[i] = table[index[i]];
  }

  void linear_forward(const float* x, const float* w, const float* b, float* y, int batch, int in,
                      int out) override {
    cpu::linear_forward(x, w, b, y, batch, in, out);
  }
  void linear_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, int batch,
                       int in, int out) override {
    cpu::linear_backward(x, w, dy, dw, db, dx, batch, in, out);
  }
  void relu_forward(const float* x, float* y, std::size_t n) override { cpu::relu_forward(x, y, n); }
  void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) override {
    cpu::relu_backward(y, dy, dx, n);
  }

  std::size_t conv_scratch(const ConvShape& s, int) const override { return cpu::conv_scratch(s); }
  void conv2d_forward(const float* x, const float* w, const float* b, float* y, float* scratch, int batch,
                      const ConvShape& s) override {
    cpu::conv2d_forward(x, w, b, y, scratch, batch, s);
  }
  void conv2d_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx,
                       float* scratch, int batch, const ConvShape& s) override {
    cpu::conv2d_backward(x, w, dy, dw, db, dx, scratch, batch, s);
  }
  void relu_max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w) override {
    cpu::relu_max_pool2_forward(x, y, where, planes, h, w);
  }
  void relu_max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w) override {
    cpu::relu_max_pool2_backward(dy, where, dx, planes, h, w);
  }
  void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p,
                       const DropoutKey& key) override {
    cpu::dropout_forward(x, y, mask, rows, width, p, key);
  }
  void multiply(float* y, const float* a, const float* b, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
  }

  void cross_entropy(const float* logits, const int* labels, float* dlogits, int batch, int classes, float scale,
                     float* loss_acc) override {
    const float loss = cpu::cross_entropy(logits, labels, dlogits, batch, classes);
    if (scale != 1.0f) this->scale(dlogits, scale, std::size_t(batch) * classes);
    *loss_acc += scale * loss;
  }
  void mse(const float* pred, const float* target, float* dpred, std::size_t n, float scale,
           float* loss_acc) override {
    const float loss = cpu::mse(pred, target, dpred, n);
    if (scale != 1.0f) this->scale(dpred, scale, n);
    *loss_acc += scale * loss;
  }

  void count_correct(const float* logits, const int* labels, int batch, int classes, float* acc) override {
    for (int r = 0; r < batch; ++r) {
      const float* z = logits + std::size_t(r) * classes;
      if (argmax_row(z, classes) == labels[r]) *acc += 1.0f;
    }
  }
  void sum_squared_error(const float* pred, const float* target, std::size_t n, float* acc) override {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += double(pred[i] - target[i]) * double(pred[i] - target[i]);
    *acc += float(sum);
  }

  // The GPT: gpt_layers.hpp's functions, which take the token file's uint16s.
  void embed_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C) override {
    gpt::embed_forward(out, narrowed(tokens, B * T), wte, wpe, B, T, C);
  }
  void embed_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C) override {
    gpt::embed_backward(dwte, dwpe, dout, narrowed(tokens, B * T), B, T, C);
  }
  void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w, const float* b, int N,
                         int C) override {
    gpt::layernorm_forward(out, mean, rstd, x, w, b, N, C);
  }
  void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x, const float* w,
                          const float* mean, const float* rstd, int N, int C) override {
    gpt::layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
  }
  std::size_t attention_saved(int B, int T, int NH) const override { return std::size_t(B) * NH * T * T; }
  void attention_forward(float* out, float* saved, const float* qkv, int B, int T, int C, int NH) override {
    gpt::attention_forward(out, saved, qkv, B, T, C, NH);
  }
  void attention_backward(float* dqkv, const float* dout, const float*, const float* qkv, float* saved, int B, int T,
                          int C, int NH) override {
    scores_.resize(std::size_t(T));
    gpt::attention_backward(dqkv, dout, qkv, saved, scores_.data(), B, T, C, NH);
  }
  void gelu_forward(float* out, const float* x, std::size_t n) override { gpt::gelu_forward(out, x, n); }
  void gelu_backward(float* dx, const float* x, const float* dout, std::size_t n) override {
    gpt::gelu_backward(dx, x, dout, n);
  }
  void cross_entropy_padded(const float* logits, const int* targets, float* dlogits, int N, int V, int Vp,
                            float* loss_acc) override {
    *loss_acc += gpt::cross_entropy_padded(logits, narrowed(targets, N), dlogits, N, V, Vp);
  }
  void sum_squares(const float* x, std::size_t n, float* acc) override {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += double(x[i]) * x[i];
    *acc += float(sum);
  }
  void adamw(float* w, float* m, float* v, const float* g, const float* decay, std::size_t n, float lr, float beta1,
             float beta2, float eps, float weight_decay, float clip, int* step) override {
    cpu::adamw(w, m, v, g, decay, n, lr, beta1, beta2, eps, weight_decay, clip, adam_bias(beta1, beta2, ++*step));
  }

  void sgd_momentum(float* w, float* velocity, const float* g, std::size_t n, float lr, float momentum) override {
    cpu::sgd_momentum(w, velocity, g, n, lr, momentum);
  }
  void adam(float* w, float* m, float* v, const float* g, std::size_t n, float lr, float beta1, float beta2,
            float eps, int* step) override {
    cpu::adam(w, m, v, g, n, lr, beta1, beta2, eps, adam_bias(beta1, beta2, ++*step));
  }
  void adadelta(float* w, float* sq, float* acc, const float* g, std::size_t n, float lr, float rho,
                float eps) override {
    cpu::adadelta(w, sq, acc, g, n, lr, rho, eps);
  }

 private:
  static void* zeroed(std::size_t bytes) {
    // 64-byte aligned for sgemm; calloc's zero pages cost nothing until touched.
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, rounded);
    return p;
  }
  const std::uint16_t* narrowed(const int* tokens, int n) {
    tokens_.assign(tokens, tokens + n);
    return tokens_.data();
  }
  int threads_;
  std::vector<std::uint16_t> tokens_;  // the last narrowed() tokens
  std::vector<float> scores_;          // attention_backward's row of scores
};

}  // namespace

std::unique_ptr<Ops> make_cpu_ops(int threads) { return std::make_unique<CpuOps>(threads < 1 ? 1 : threads); }

}  // namespace ddp::train
