// ddp-sgemm-bench: the MLP's matrix products alone, single-thread OpenBLAS,
// batch 64: forward y = x W^T and backward dW = dY^T X for every layer, dX =
// dY W for all but the first (ddp-train computes exactly these). Prints the
// sgemm rate in GFLOP/s and the samples/s one core reaches doing nothing but
// these products: the sgemm-bound limit per core (bench/trainer_bench.py).
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main() {
  openblas_set_num_threads(1);
  const int batch = 64;
  const int dims[] = {784, 256, 128, 10};
  double flop = 0, seconds = 0;
  const int reps = 3000;
  for (int l = 0; l < 3; ++l) {
    const int in = dims[l], out = dims[l + 1];
    std::vector<float> x(std::size_t(batch) * in, 0.5f), w(std::size_t(out) * in, 0.25f), y(std::size_t(batch) * out),
        dw(std::size_t(out) * in), dx(std::size_t(batch) * in);
    for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms up
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out, in, 1, x.data(), in, w.data(), in, 0, y.data(), out);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, batch, 1, y.data(), out, x.data(), in, 1, dw.data(), in);
        if (l > 0)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, in, out, 1, y.data(), out, w.data(), in, 0, dx.data(), in);
      }
      if (pass == 1) {
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        flop += double(reps) * 2.0 * batch * in * out * (l > 0 ? 3 : 2);
      }
    }
  }
  std::printf("%.1f %.0f\n", flop / seconds / 1e9, double(batch) * reps / seconds);
  return 0;
}
