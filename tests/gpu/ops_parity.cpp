// ddp-gpu-selftest: runs every Ops method on CudaOps and on CpuOps with the
// same random inputs (several shapes, batch 1 and odd sizes like 777
// included) and compares the results. Prints one PASS/FAIL line per op with
// its largest error, and exits non-zero on any failure or when no GPU is
// visible. Then a one-rank NcclCollectives check (no store needed for one
// rank): the pre-multiplied all-reduce, finish_buckets, broadcast.
//
// Error measure: |gpu - cpu| divided by the largest |cpu| of that output, so
// that a sum which cancels to almost zero is judged against the scale of its
// terms. cuBLAS and OpenBLAS add in different orders; float32 products of 777
// terms agree to about 1e-6 of that scale, so 1e-4 leaves a wide margin while
// still catching any layout or transpose mistake (those give errors near 1).
//
// Usage: ddp-gpu-selftest [--device N] [--no-nccl]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_ops.hpp"
#include "gpu_backend.hpp"
#include "model/ops.hpp"
#include "selftest.hpp"

namespace {

using namespace ddp::gpu_selftest;
using ddp::train::Ops;

// Memory, copies and the elementwise ops, for one length n.
void test_elementwise(Selftest& t, std::size_t n) {
  Ops& cpu = t.cpu_;
  Ops& gpu = t.gpu_;
  const std::string where = shape_text("n", n);

  const Buf zero = t.zeros(n);
  t.compare("alloc (zero-filled)", where, zero);

  const Buf x = t.make(t.random(n));
  t.compare("upload/download", where, x);

  // download_async into page-locked memory, valid after synchronize().
  float* hc = cpu.alloc_host(n);
  float* hg = gpu.alloc_host(n);
  cpu.download_async(hc, x.c, n);
  gpu.download_async(hg, x.g, n);
  cpu.synchronize();
  gpu.synchronize();
  t.compare_values("download_async", where, std::vector<float>(hc, hc + n), std::vector<float>(hg, hg + n));
  cpu.release_host(hc);
  gpu.release_host(hg);

  const Buf f = t.zeros(n);
  cpu.fill(f.c, 0.375f, n);
  gpu.fill(f.g, 0.375f, n);
  t.compare("fill", where, f);

  const Buf y = t.zeros(n);
  cpu.copy(y.c, x.c, n);
  gpu.copy(y.g, x.g, n);
  t.compare("copy", where, y);

  cpu.scale(y.c, -1.75f, n);
  gpu.scale(y.g, -1.75f, n);
  t.compare("scale", where, y);

  const Buf z = t.make(t.random(n));
  cpu.add(y.c, z.c, n);
  gpu.add(y.g, z.g, n);
  t.compare("add", where, y);

  const Buf r = t.zeros(n);
  cpu.relu_forward(x.c, r.c, n);
  gpu.relu_forward(x.g, r.g, n);
  t.compare("relu_forward", where, r);

  const Buf dy = t.make(t.random(n));
  const Buf dx = t.zeros(n);
  cpu.relu_backward(r.c, dy.c, dx.c, n);
  gpu.relu_backward(r.g, dy.g, dx.g, n);
  t.compare("relu_backward", where, dx);

  // MSE with scale 1 and a gradient-accumulation scale, accumulating onto a non-zero loss.
  const Buf target = t.make(t.random(n));
  const Buf dpred = t.zeros(n);
  const Buf loss = t.make({0.5f});
  for (float scale : {1.0f, 0.25f}) {
    cpu.mse(x.c, target.c, dpred.c, n, scale, loss.c);
    gpu.mse(x.g, target.g, dpred.g, n, scale, loss.g);
    t.compare("mse (gradient)", where, dpred);
    t.compare("mse (loss)", where, loss);
  }

  const Buf sse = t.make({2.0f});
  cpu.sum_squared_error(x.c, target.c, n, sse.c);
  gpu.sum_squared_error(x.g, target.g, n, sse.g);
  t.compare("sum_squared_error", where, sse);

  // Optimizers: a few steps each, so that velocity and moments build up.
  const Buf w1 = t.make(t.random(n));
  const Buf vel = t.zeros(n);
  for (int step = 0; step < 3; ++step) {
    const Buf g = t.make(t.random(n));
    cpu.sgd_momentum(w1.c, vel.c, g.c, n, 0.05f, 0.9f);
    gpu.sgd_momentum(w1.g, vel.g, g.g, n, 0.05f, 0.9f);
  }
  t.compare("sgd_momentum (weights)", where, w1);
  t.compare("sgd_momentum (velocity)", where, vel);

  const Buf w2 = t.make(t.random(n));
  const Buf m = t.zeros(n);
  const Buf v = t.zeros(n);
  // The step count lives in ops memory; each call counts one more step.
  int* cpu_step = cpu.alloc_int(1);
  int* gpu_step = gpu.alloc_int(1);
  for (int step = 1; step <= 3; ++step) {
    const Buf g = t.make(t.random(n));
    cpu.adam(w2.c, m.c, v.c, g.c, n, 1e-3f, 0.9f, 0.999f, 1e-8f, cpu_step);
    gpu.adam(w2.g, m.g, v.g, g.g, n, 1e-3f, 0.9f, 0.999f, 1e-8f, gpu_step);
  }
  cpu.release(cpu_step);
  gpu.release(gpu_step);
  t.compare("adam (weights)", where, w2);
  t.compare("adam (first moment)", where, m);
  t.compare("adam (second moment)", where, v);
  t.release_all();
}

// The layer ops for one [batch x in] -> [batch x out] linear layer.
void test_layer(Selftest& t, int batch, int in, int out) {
  Ops& cpu = t.cpu_;
  Ops& gpu = t.gpu_;
  const std::string where = shape_text("batch x in x out", batch, in, out);

  // gather_rows from a table of 3*batch+1 rows; alloc_int's zeros index row 0.
  const int rows = 3 * batch + 1;
  const Buf table = t.make(t.random(std::size_t(rows) * in));
  const IntBuf index = t.make_ints(t.random_ints(batch, rows));
  const Buf x = t.zeros(std::size_t(batch) * in);
  cpu.gather_rows(table.c, index.c, batch, in, x.c);
  gpu.gather_rows(table.g, index.g, batch, in, x.g);
  t.compare("gather_rows", where, x);
  const IntBuf zero_index = t.zero_ints(batch);
  const Buf x0 = t.zeros(std::size_t(batch) * in);
  cpu.gather_rows(table.c, zero_index.c, batch, in, x0.c);
  gpu.gather_rows(table.g, zero_index.g, batch, in, x0.g);
  t.compare("alloc_int (zero-filled)", where, x0);

  const Buf w = t.make(t.random(std::size_t(out) * in));
  const Buf b = t.make(t.random(out));
  const Buf y = t.zeros(std::size_t(batch) * out);
  cpu.linear_forward(x.c, w.c, b.c, y.c, batch, in, out);
  gpu.linear_forward(x.g, w.g, b.g, y.g, batch, in, out);
  t.compare("linear_forward", where, y);

  // Backward accumulates into dW and db: start them non-zero. Run it twice
  // (micro-batches), the second time without dX (the first layer's case).
  const Buf dy = t.make(t.random(std::size_t(batch) * out));
  const Buf dw = t.make(t.random(std::size_t(out) * in));
  const Buf db = t.make(t.random(out));
  const Buf dx = t.make(t.random(std::size_t(batch) * in));  // overwritten, not accumulated
  cpu.linear_backward(x.c, w.c, dy.c, dw.c, db.c, dx.c, batch, in, out);
  gpu.linear_backward(x.g, w.g, dy.g, dw.g, db.g, dx.g, batch, in, out);
  t.compare("linear_backward (dW)", where, dw);
  t.compare("linear_backward (db)", where, db);
  t.compare("linear_backward (dX)", where, dx);
  cpu.linear_backward(x.c, w.c, dy.c, dw.c, db.c, nullptr, batch, in, out);
  gpu.linear_backward(x.g, w.g, dy.g, dw.g, db.g, nullptr, batch, in, out);
  t.compare("linear_backward (dW)", where + ", no dX", dw);
  t.compare("linear_backward (db)", where + ", no dX", db);
  // No bias (the GPT's head): y overwritten, no db.
  cpu.linear_forward(x.c, w.c, nullptr, y.c, batch, in, out);
  gpu.linear_forward(x.g, w.g, nullptr, y.g, batch, in, out);
  t.compare("linear_forward", where + ", no bias", y);
  cpu.linear_backward(x.c, w.c, dy.c, dw.c, nullptr, dx.c, batch, in, out);
  gpu.linear_backward(x.g, w.g, dy.g, dw.g, nullptr, dx.g, batch, in, out);
  t.compare("linear_backward (dX)", where + ", no bias", dx);

  // Cross-entropy over `out` classes, with labels gathered from a label table
  // (which checks gather_labels: ints cannot be downloaded directly).
  const int classes = out;
  const Buf logits = t.make(t.random(std::size_t(batch) * classes, -8.0f, 8.0f));
  const IntBuf label_table = t.make_ints(t.random_ints(rows, classes));
  const IntBuf labels = t.zero_ints(batch);
  cpu.gather_labels(label_table.c, index.c, batch, labels.c);
  gpu.gather_labels(label_table.g, index.g, batch, labels.g);
  const Buf dlogits = t.zeros(std::size_t(batch) * classes);
  const Buf loss = t.make({1.5f});
  for (float scale : {1.0f, 0.5f}) {
    cpu.cross_entropy(logits.c, labels.c, dlogits.c, batch, classes, scale, loss.c);
    gpu.cross_entropy(logits.g, labels.g, dlogits.g, batch, classes, scale, loss.g);
    t.compare("cross_entropy (grad)", where, dlogits);
    t.compare("cross_entropy (loss)", where, loss);
    t.compare("gather_labels", where, dlogits);  // wrong labels would change the gradient
  }

  const Buf correct = t.make({3.0f});
  cpu.count_correct(logits.c, labels.c, batch, classes, correct.c);
  gpu.count_correct(logits.g, labels.g, batch, classes, correct.g);
  // Also logits whose arg-max is the label in about half of the rows.
  const std::vector<int> hot_labels = t.random_ints(batch, classes);
  std::vector<float> hot = t.random(std::size_t(batch) * classes);
  for (int r = 0; r < batch; r += 2) hot[std::size_t(r) * classes + hot_labels[r]] = 2.0f;
  const Buf hot_logits = t.make(hot);
  const IntBuf hot_label_buf = t.make_ints(hot_labels);
  cpu.count_correct(hot_logits.c, hot_label_buf.c, batch, classes, correct.c);
  gpu.count_correct(hot_logits.g, hot_label_buf.g, batch, classes, correct.g);
  t.compare("count_correct", where, correct);
  t.release_all();
}

// One rank: the all-reduce is the identity after the pre-multiplication, so
// the result is exact. Exercises communicator set-up, the comm stream, the
// events, ncclRedOpCreatePreMulSum and finish_buckets.
bool test_nccl_one_rank(int device) {
  ddp::train::GpuBackendConfig config;
  config.local_rank = device;
  config.rank = 0;
  config.world_size = 1;
  config.init_timeout = std::chrono::seconds(60);
  config.op_timeout = std::chrono::seconds(60);
  auto backend = ddp::train::make_gpu_backend(config);
  if (!backend) {
    std::printf("FAIL  nccl (1 rank)           %s\n", backend.error().c_str());
    return false;
  }
  Ops& ops = *backend->ops;
  ddp::train::Collectives& comm = *backend->comm;
  std::printf("      %s\n", comm.name().c_str());

  const std::size_t n = 777 * 1000 + 3;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = float(i % 1000) - 500.0f;
  float* a = ops.alloc(n);
  float* b = ops.alloc(n);
  ops.upload(a, host.data(), n);
  ops.upload(b, host.data(), n);
  ops.scale(a, 2.0f, n);           // compute-stream work the bucket must wait for
  comm.start_bucket(a, n, 0.25f);  // a = 0.25 * (2 * host)
  comm.start_bucket(b, n, 1.0f);   // plain sum
  const auto finished = comm.finish_buckets();
  ops.add(a, b, n);  // ordered after the reductions by finish_buckets
  std::vector<float> got(n);
  ops.download(got.data(), a, n);
  bool ok = finished.ok();
  double max_err = 0;
  for (std::size_t i = 0; i < n; ++i) max_err = std::max(max_err, std::fabs(double(got[i]) - 1.5 * host[i]));
  ok = ok && max_err == 0;

  const auto reduced = comm.allreduce_sum(b, n);
  const auto broadcast = comm.broadcast(b, n, 0);
  ops.download(got.data(), b, n);
  for (std::size_t i = 0; i < n; ++i) max_err = std::max(max_err, std::fabs(double(got[i]) - host[i]));
  ok = ok && reduced.ok() && broadcast.ok() && max_err == 0;
  ops.release(a);
  ops.release(b);

  std::printf("%s  %-22s max abs err %-10.3g\n", ok ? "PASS" : "FAIL", "nccl (1 rank)", max_err);
  if (!finished) std::printf("      finish_buckets: %s\n", finished.error().c_str());
  if (!reduced) std::printf("      allreduce_sum: %s\n", reduced.error().c_str());
  if (!broadcast) std::printf("      broadcast: %s\n", broadcast.error().c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  bool nccl = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--no-nccl") == 0) {
      nccl = false;
    } else {
      std::fprintf(stderr, "usage: %s [--device N] [--no-nccl]\n", argv[0]);
      return 2;
    }
  }

  auto gpu = ddp::train::make_cuda_ops(device);
  if (!gpu) {
    std::fprintf(stderr, "ddp-gpu-selftest: %s\n", gpu.error().c_str());
    return 1;
  }
  const std::unique_ptr<Ops> cpu = ddp::train::make_cpu_ops(1);
  std::printf("ddp-gpu-selftest: %s against %s, tolerance %.0e of each output's largest value\n",
              (*gpu)->name().c_str(), cpu->name().c_str(), kTolerance);

  Selftest t(*cpu, **gpu);
  for (std::size_t n : {std::size_t(1), std::size_t(777), std::size_t(65536), std::size_t(1) << 20 | 777})
    test_elementwise(t, n);
  const int shapes[][3] = {{1, 1, 1},       {1, 784, 128},  {5, 3, 7},     {64, 777, 10},
                           {128, 784, 128}, {777, 129, 10}, {33, 777, 777}};
  for (const auto& s : shapes) test_layer(t, s[0], s[1], s[2]);
  // The CNN's two convolutions at the tutorial's sizes, and odd ones.
  const ddp::train::ConvShape convs[] = {{1, 28, 28, 32, 3}, {32, 26, 26, 64, 3}, {3, 9, 7, 5, 3}, {2, 6, 6, 1, 3}};
  for (const auto& conv : convs)
    for (int batch : {1, 5}) test_cnn(t, batch, conv);
  // The GPT's: odd sizes, the small config's, GPT-2's heads (64 channels) and vocabulary.
  const GptShape gpts[] = {{3, 5, 40, 5, 37, 64}, {2, 64, 128, 4, 256, 256}, {1, 128, 768, 12, 50257, 50304}};
  for (const auto& gpt : gpts) test_gpt(t, gpt);
  bool ok = t.report();

  // The linear layers in bf16 (--precision bf16, the GPT's default on the
  // GPU): operands rounded to 8 bits of mantissa (2^-8 = 0.4 % each), sums
  // in fp32, against the CPU's fp32: within 2 % of each output's largest
  // value; a layout or transpose mistake still gives errors near 1.
  auto gpu16 = ddp::train::make_cuda_ops(device, ddp::train::MatmulPrecision::bf16);
  if (!gpu16) {
    std::fprintf(stderr, "ddp-gpu-selftest: %s\n", gpu16.error().c_str());
    return 1;
  }
  std::printf("ddp-gpu-selftest: the linear layers in bf16, tolerance 2e-2\n");
  Selftest t16(*cpu, **gpu16, 2e-2);
  for (const auto& s : shapes) test_layer(t16, s[0], s[1], s[2]);
  ok = t16.report() && ok;

  if (nccl) ok = test_nccl_one_rank(device) && ok;
  std::printf("%s\n", ok ? "ddp-gpu-selftest: all passed" : "ddp-gpu-selftest: FAILED");
  return ok ? 0 : 1;
}
