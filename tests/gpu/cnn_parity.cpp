// ddp-gpu-selftest's CNN part: convolution forward and backward, 2x2 max
// pooling, dropout, the elementwise product and Adadelta, CudaOps against
// CpuOps on the same inputs (ops_parity.cpp has the tolerance). Each backend
// gets the scratch it asks for (the CPU one image's columns, CUDA the batch's).
#include "selftest.hpp"

namespace ddp::gpu_selftest {

namespace {

using ddp::train::ConvShape;
using ddp::train::DropoutKey;
using ddp::train::Ops;

void test_conv(Selftest& t, int batch, const ConvShape& s, const std::string& where) {
  Ops& cpu = t.cpu_;
  Ops& gpu = t.gpu_;
  const Buf x = t.make(t.random(batch * s.in_size()));
  const Buf w = t.make(t.random(s.weights()));
  const Buf b = t.make(t.random(s.out_c));
  const Buf y = t.make(t.random(batch * s.out_size()));  // overwritten
  float* cpu_cols = cpu.alloc(cpu.conv_scratch(s, batch));
  float* gpu_cols = gpu.alloc(gpu.conv_scratch(s, batch));
  cpu.conv2d_forward(x.c, w.c, b.c, y.c, cpu_cols, batch, s);
  gpu.conv2d_forward(x.g, w.g, b.g, y.g, gpu_cols, batch, s);
  t.compare("conv2d_forward", where, y);
  // Backward accumulates dW and db (start them non-zero) and overwrites dX;
  // twice, the second time without dX (the first layer's case).
  const Buf dy = t.make(t.random(batch * s.out_size()));
  const Buf dw = t.make(t.random(s.weights()));
  const Buf db = t.make(t.random(s.out_c));
  const Buf dx = t.make(t.random(batch * s.in_size()));
  cpu.conv2d_backward(x.c, w.c, dy.c, dw.c, db.c, dx.c, cpu_cols, batch, s);
  gpu.conv2d_backward(x.g, w.g, dy.g, dw.g, db.g, dx.g, gpu_cols, batch, s);
  t.compare("conv2d_backward (dW)", where, dw);
  t.compare("conv2d_backward (db)", where, db);
  t.compare("conv2d_backward (dX)", where, dx);
  cpu.conv2d_backward(x.c, w.c, dy.c, dw.c, db.c, nullptr, cpu_cols, batch, s);
  gpu.conv2d_backward(x.g, w.g, dy.g, dw.g, db.g, nullptr, gpu_cols, batch, s);
  t.compare("conv2d_backward (dW)", where + ", no dX", dw);
  cpu.release(cpu_cols);
  gpu.release(gpu_cols);
}

// Pooling over the convolution's output planes (when both sides are even);
// `where` is checked through backward, which routes by it.
void test_pool(Selftest& t, int planes, int h, int w, const std::string& where) {
  if (h % 2 || w % 2) return;
  const std::size_t n = std::size_t(planes) * h * w, pooled = n / 4;
  const Buf x = t.make(t.random(n));
  const Buf y = t.zeros(pooled);
  const IntBuf at = t.zero_ints(pooled);
  t.cpu_.relu_max_pool2_forward(x.c, y.c, at.c, planes, h, w);
  t.gpu_.relu_max_pool2_forward(x.g, y.g, at.g, planes, h, w);
  t.compare("relu_max_pool2_forward", where, y);
  const Buf dy = t.make(t.random(pooled));
  const Buf dx = t.make(t.random(n));  // overwritten: zero where no maximum was
  t.cpu_.relu_max_pool2_backward(dy.c, at.c, dx.c, planes, h, w);
  t.gpu_.relu_max_pool2_backward(dy.g, at.g, dx.g, planes, h, w);
  t.compare("relu_max_pool2_backward", where, dx);
}

void test_dropout(Selftest& t, int rows, int width, const std::string& where) {
  const std::size_t n = std::size_t(rows) * width;
  const Buf x = t.make(t.random(n));
  const Buf y = t.zeros(n), mask = t.zeros(n), dx = t.zeros(n);
  const IntBuf round = t.make_ints({41});
  const IntBuf sample = t.make_ints(t.random_ints(rows, 60000));
  t.cpu_.dropout_forward(x.c, y.c, mask.c, rows, width, 0.25f, DropoutKey{7, 1, round.c, sample.c});
  t.gpu_.dropout_forward(x.g, y.g, mask.g, rows, width, 0.25f, DropoutKey{7, 1, round.g, sample.g});
  t.compare("dropout_forward (y)", where, y);
  t.compare("dropout_forward (mask)", where, mask);
  t.cpu_.multiply(dx.c, y.c, mask.c, n);
  t.gpu_.multiply(dx.g, y.g, mask.g, n);
  t.compare("multiply", where, dx);
}

void test_adadelta(Selftest& t, std::size_t n, const std::string& where) {
  const Buf w = t.make(t.random(n));
  const Buf sq = t.zeros(n), acc = t.zeros(n);
  for (int step = 0; step < 3; ++step) {
    const Buf g = t.make(t.random(n));
    t.cpu_.adadelta(w.c, sq.c, acc.c, g.c, n, 1.0f, 0.9f, 1e-6f);
    t.gpu_.adadelta(w.g, sq.g, acc.g, g.g, n, 1.0f, 0.9f, 1e-6f);
  }
  t.compare("adadelta (weights)", where, w);
  t.compare("adadelta (mean g^2)", where, sq);
  t.compare("adadelta (mean update^2)", where, acc);
}

}  // namespace

void test_cnn(Selftest& t, int batch, const ConvShape& s) {
  const std::string where = "batch " + std::to_string(batch) + ", " + std::to_string(s.in_c) + "x" +
                            std::to_string(s.in_h) + "x" + std::to_string(s.in_w) + " -> " + std::to_string(s.out_c) +
                            " channels";
  test_conv(t, batch, s, where);
  test_pool(t, batch * s.out_c, s.out_h(), s.out_w(), where);
  test_dropout(t, batch, int(s.out_size()), where);
  test_adadelta(t, s.weights(), where);
  t.release_all();
}

}  // namespace ddp::gpu_selftest
