// ddp-sgemm-bench: the sgemm-bound limit of a CPU training step.
//
// With --model mlp|cnn it runs exactly the matrix products ddp-train's CPU
// backend performs for one training step of that model at per-worker batch
// N (same shapes, transposes, leading dimensions and beta; same order), on
// single-threaded OpenBLAS, in K processes at once, each with its own
// buffers: K=1 is what one core can do, K=2 what two cores do together
// (shared caches, memory bandwidth and clocks included), as K workers of a
// node run. Processes, not threads: OpenBLAS (0.3.21 at least) serialises
// concurrent sgemm calls from threads of one process on a lock, which halves
// two threads' rate. It prints one JSON line: the training FLOPs per sample
// (2*m*n*k summed over the products), each process's GFLOP/s, and the
// samples/s all K reach together.
//
// What the limit means: no trainer that computes these products with this
// OpenBLAS on these cores can train faster than samples_per_second_total;
// a trainer's samples/s divided by it is the fraction of the limit reached.
// What it excludes: everything that is not one of these sgemm calls, namely
// the bias adds and sums, ReLU, pooling, dropout, the loss, the optimizer,
// data loading, the gradient all-reduce, and for the CNN the im2col/col2im
// copies around each per-image convolution product. A real step must also
// pay for those, so it stays below the limit even with perfect overlap.
//
#include <cblas.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "ddp/base/json.hpp"
#include "model/cnn.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// One row-major C = A B + beta C of a training step, A [m x k] and B [k x n]
// after their transposes, each operand at an offset (in floats) into one of
// the step's tensors: the CNN's per-image products address image i of a
// batch tensor.
struct Product {
  CBLAS_TRANSPOSE trans_a = CblasNoTrans, trans_b = CblasNoTrans;
  int m = 0, n = 0, k = 0;
  float beta = 0.0f;
  int a = 0, b = 0, c = 0;  // tensors (Plan::tensor)
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;

  int lda() const { return trans_a == CblasNoTrans ? k : m; }
  int ldb() const { return trans_b == CblasNoTrans ? n : k; }
  int ldc() const { return n; }
  double flop() const { return 2.0 * m * n * k; }
};

// A step's products in ddp-train's order, and how many floats each tensor
// they touch holds.
class Plan {
 public:
  int tensor(std::size_t floats) {
    tensor_floats_.push_back(floats);
    return int(tensor_floats_.size()) - 1;
  }
  void add(const Product& p) { products_.push_back(p); }
  const std::vector<Product>& products() const { return products_; }
  const std::vector<std::size_t>& tensor_floats() const { return tensor_floats_; }
  double flop() const {
    double sum = 0;
    for (const Product& p : products_) sum += p.flop();
    return sum;
  }

 private:
  std::vector<Product> products_;
  std::vector<std::size_t> tensor_floats_;
};

std::size_t floats(int rows, std::size_t cols) { return std::size_t(rows) * cols; }

// A linear layer over the whole batch, as model/layers.cpp computes it:
// forward y = b + x W^T (beta 1: y holds the bias first); backward
// dW += dY^T X, and dX = dY W unless no one needs it (the first layer).
struct Linear {
  int batch, in, out;
  int x, w, y, dy, dw, dx;  // tensors; dx < 0: not computed
};
Linear add_linear(Plan& plan, int batch, int in, int out, int x, int dy, bool with_dx) {
  return {batch,
          in,
          out,
          x,
          plan.tensor(floats(out, in)),
          plan.tensor(floats(batch, out)),
          dy,
          plan.tensor(floats(out, in)),
          with_dx ? plan.tensor(floats(batch, in)) : -1};
}
void linear_forward(Plan& plan, const Linear& l) {
  plan.add({.trans_a = CblasNoTrans, .trans_b = CblasTrans, .m = l.batch, .n = l.out, .k = l.in, .beta = 1.0f,
            .a = l.x, .b = l.w, .c = l.y});
}
void linear_backward(Plan& plan, const Linear& l) {
  plan.add({.trans_a = CblasTrans, .trans_b = CblasNoTrans, .m = l.out, .n = l.in, .k = l.batch, .beta = 1.0f,
            .a = l.dy, .b = l.x, .c = l.dw});
  if (l.dx >= 0)
    plan.add({.trans_a = CblasNoTrans, .trans_b = CblasNoTrans, .m = l.batch, .n = l.in, .k = l.out, .beta = 0.0f,
              .a = l.dy, .b = l.w, .c = l.dx});
}

// A convolution as model/conv_layers.cpp lowers it: im2col of one image into
// a scratch [patch x spatial] shared by all images and layers, then one
// sgemm per image. Forward y_i = b + W cols; backward dW += dY_i cols^T,
// and (not for the first layer) dcols = W^T dY_i into the same scratch,
// which col2im adds back into dX_i. The im2col/col2im copies are not run.
struct Conv {
  int batch;
  ddp::train::ConvShape shape;
  int w, cols, y, dy, dw;
  bool with_dx;
};
Conv add_conv(Plan& plan, int batch, const ddp::train::ConvShape& s, int cols, int dy, bool with_dx) {
  return {batch, s, plan.tensor(s.weights()), cols, plan.tensor(floats(batch, s.out_size())), dy,
          plan.tensor(s.weights()), with_dx};
}
void conv_forward(Plan& plan, const Conv& c) {
  const int spatial = c.shape.out_h() * c.shape.out_w(), patch = int(c.shape.patch());
  for (int i = 0; i < c.batch; ++i)
    plan.add({.trans_a = CblasNoTrans, .trans_b = CblasNoTrans, .m = c.shape.out_c, .n = spatial, .k = patch,
              .beta = 1.0f, .a = c.w, .b = c.cols, .c = c.y, .c_offset = floats(i, c.shape.out_size())});
}
void conv_backward(Plan& plan, const Conv& c) {
  const int spatial = c.shape.out_h() * c.shape.out_w(), patch = int(c.shape.patch());
  for (int i = 0; i < c.batch; ++i) {
    const std::size_t image = floats(i, c.shape.out_size());
    plan.add({.trans_a = CblasNoTrans, .trans_b = CblasTrans, .m = c.shape.out_c, .n = patch, .k = spatial,
              .beta = 1.0f, .a = c.dy, .b = c.cols, .c = c.dw, .a_offset = image});
    if (c.with_dx)
      plan.add({.trans_a = CblasTrans, .trans_b = CblasNoTrans, .m = patch, .n = spatial, .k = c.shape.out_c,
                .beta = 0.0f, .a = c.w, .b = c.dy, .c = c.cols, .b_offset = image});
  }
}

// The MLP ddp-train builds by default: MNIST's 784 pixels, --hidden 256,128,
// 10 classes. As model/model.cpp: layer l+1 reads layer l's output, and
// layer l's output gradient is layer l+1's dX.
Plan mlp_step(int batch) {
  const int dims[] = {784, 256, 128, 10};
  constexpr int layers = 3;
  Plan plan;
  std::vector<Linear> linear;
  int x = plan.tensor(floats(batch, dims[0]));
  for (int l = 0; l < layers; ++l) {
    linear.push_back(add_linear(plan, batch, dims[l], dims[l + 1], x, -1, l > 0));
    x = linear.back().y;
  }
  linear.back().dy = plan.tensor(floats(batch, dims[layers]));  // the loss's gradient
  for (int l = layers - 2; l >= 0; --l) linear[std::size_t(l)].dy = linear[std::size_t(l) + 1].dx;
  for (const Linear& l : linear) linear_forward(plan, l);
  for (int l = layers - 1; l >= 0; --l) linear_backward(plan, linear[std::size_t(l)]);
  return plan;
}

// PyTorch's MNIST example net, with the shapes of ddp-train's CnnSpec
// (model/cnn.hpp), in the order of CnnNet::forward and backward. The
// tensors between the products that pooling, dropout and ReLU would fill
// are separate, as in CnnNet.
Plan cnn_step(int batch) {
  const ddp::train::CnnSpec spec;
  const ddp::train::ConvShape conv1_shape = spec.conv1_shape(), conv2_shape = spec.conv2_shape();
  Plan plan;
  const int cols = plan.tensor(std::max(conv1_shape.patch() * conv1_shape.out_h() * conv1_shape.out_w(),
                                        conv2_shape.patch() * conv2_shape.out_h() * conv2_shape.out_w()));
  const Conv conv1 = add_conv(plan, batch, conv1_shape, cols, plan.tensor(floats(batch, conv1_shape.out_size())), false);
  const Conv conv2 = add_conv(plan, batch, conv2_shape, cols, plan.tensor(floats(batch, conv2_shape.out_size())), true);
  const int fc1_input = plan.tensor(floats(batch, std::size_t(spec.pooled())));
  const int fc2_input = plan.tensor(floats(batch, std::size_t(spec.hidden)));
  const int logits_grad = plan.tensor(floats(batch, std::size_t(spec.classes)));
  const Linear fc2 = add_linear(plan, batch, spec.hidden, spec.classes, fc2_input, logits_grad, true);
  const Linear fc1 = add_linear(plan, batch, spec.pooled(), spec.hidden, fc1_input, fc2.dx, true);
  conv_forward(plan, conv1);
  conv_forward(plan, conv2);
  linear_forward(plan, fc1);
  linear_forward(plan, fc2);
  linear_backward(plan, fc2);
  linear_backward(plan, fc1);
  conv_backward(plan, conv2);
  conv_backward(plan, conv1);
  return plan;
}

// A thread's own copy of every tensor, 64-byte aligned as ddp-train's
// buffers (model/cpu_ops.cpp). Small values that stay far from overflow and
// from subnormals over seconds of accumulation.
class Tensors {
 public:
  explicit Tensors(const std::vector<std::size_t>& floats) {
    for (std::size_t n : floats) {
      const std::size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      auto* p = static_cast<float*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
      if (!p) throw std::bad_alloc();
      for (std::size_t i = 0; i < n; ++i) p[i] = 0.001f * float(int(i % 17) - 8);
      storage_.emplace_back(p);
    }
  }
  float* operator[](int tensor) const { return storage_[std::size_t(tensor)].get(); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<float, Free>> storage_;
};

void run_step(const Plan& plan, const Tensors& tensors) {
  for (const Product& p : plan.products())
    cblas_sgemm(CblasRowMajor, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, tensors[p.a] + p.a_offset, p.lda(),
                tensors[p.b] + p.b_offset, p.ldb(), p.beta, tensors[p.c] + p.c_offset, p.ldc());
}

struct Rate {
  long steps = 0;
  double seconds = 0;
};

// Warms up (OpenBLAS's buffers, caches, clocks) until `start`, then runs
// whole steps for `seconds`; the rate is its own steps over its own time, so
// a last step finishing after the end is counted fairly. Every process gets
// the same `start`, so their measured windows coincide.
Rate measure(const Plan& plan, Clock::time_point start, double seconds) {
  const Tensors tensors(plan.tensor_floats());
  do run_step(plan, tensors);
  while (Clock::now() < start);
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Rate rate;
  const auto t0 = Clock::now();
  do {
    run_step(plan, tensors);
    ++rate.steps;
  } while (Clock::now() < end);
  rate.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return rate;
}

// K processes measuring at once; each reports its Rate through a pipe.
std::vector<Rate> measure_concurrently(const Plan& plan, int processes, double warmup_seconds, double seconds) {
  const auto start =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup_seconds));
  std::vector<int> reads;
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      close(fds[0]);
      const Rate rate = measure(plan, start, seconds);
      const bool written = write(fds[1], &rate, sizeof rate) == ssize_t(sizeof rate);
      _exit(written ? 0 : 1);
    }
    close(fds[1]);
    reads.push_back(fds[0]);
    children.push_back(pid);
  }
  std::vector<Rate> rates;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    Rate rate;
    const bool got = read(reads[i], &rate, sizeof rate) == ssize_t(sizeof rate);
    close(reads[i]);
    int status = 0;
    waitpid(children[i], &status, 0);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error("a measuring process failed (status " + std::to_string(status) + ")");
    rates.push_back(rate);
  }
  return rates;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The sgemm-bound limit of one ddp-train CPU training step: its matrix products alone, "
               "single-threaded OpenBLAS, in K concurrent processes"};
  std::string model;
  int batch = 64, concurrent = 1;
  double seconds = 2.0;
  app.add_option("--model", model, "mlp (784-256-128-10) or cnn (PyTorch's MNIST example net)")
      ->required()
      ->check(CLI::IsMember({"mlp", "cnn"}));
  app.add_option("--batch", batch, "per-worker batch size")->check(CLI::PositiveNumber);
  app.add_option("--concurrent", concurrent, "processes running the step at once, each with its own buffers")
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds, "measured time, after a warm-up")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  // Each process calls sgemm on its own: OpenBLAS must not start threads of its own.
  openblas_set_num_threads(1);
  const Plan plan = model == "mlp" ? mlp_step(batch) : cnn_step(batch);
  std::vector<Rate> rates;
  try {
    rates = measure_concurrently(plan, concurrent, std::min(0.5, seconds / 4), seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-sgemm-bench: %s\n", e.what());
    return 1;
  }

  const double flop_per_step = plan.flop();
  ddp::JsonObject out;
  out["model"] = model;
  out["batch"] = batch;
  out["concurrent"] = concurrent;
  out["flop_per_sample"] = flop_per_step / batch;
  double gflops_total = 0, samples_per_second_total = 0;
  for (const Rate& r : rates) {
    const double gflops = double(r.steps) * flop_per_step / r.seconds / 1e9;
    out["gflops_per_process"].push_back(gflops);
    gflops_total += gflops;
    samples_per_second_total += double(r.steps) * batch / r.seconds;
  }
  out["gflops_total"] = gflops_total;
  out["samples_per_second_total"] = samples_per_second_total;
  out["openblas_corename"] = openblas_get_corename();
  out["openblas_config"] = openblas_get_config();
  std::printf("%s\n", ddp::json_line(out).c_str());
  return 0;
}
