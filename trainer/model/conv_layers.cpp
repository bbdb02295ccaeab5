#include "model/conv_layers.hpp"

#include <cblas.h>

#include <algorithm>

#include "model/cpu_clones.hpp"
#include "model/kernels.hpp"

namespace ddp::train::cpu {

namespace {

// One image's columns: row (c, ki, kj) holds x[c][oh + ki][ow + kj] over
// (oh, ow). With stride 1 each (row, oh) is one contiguous run of out_w.
void im2col(const float* x, float* cols, const ConvShape& s) {
  const int oh = s.out_h(), ow = s.out_w();
  for (int c = 0; c < s.in_c; ++c)
    for (int ki = 0; ki < s.k; ++ki)
      for (int kj = 0; kj < s.k; ++kj) {
        float* row = cols + ((std::size_t(c) * s.k + ki) * s.k + kj) * oh * ow;
        for (int r = 0; r < oh; ++r) {
          // A plain loop, not memcpy: the runs are short (24 floats for
          // conv2), and a call per run costs more than the copy (CMakeLists.txt
          // keeps GCC from turning it into a memcpy call).
          const float* from = x + (std::size_t(c) * s.in_h + r + ki) * s.in_w + kj;
          float* to = row + std::size_t(r) * ow;
          for (int q = 0; q < ow; ++q) to[q] = from[q];
        }
      }
}

// The reverse: every column entry added back to the input position it came from.
void col2im(const float* cols, float* dx, const ConvShape& s) {
  const int oh = s.out_h(), ow = s.out_w();
  std::fill(dx, dx + s.in_size(), 0.0f);
  for (int c = 0; c < s.in_c; ++c)
    for (int ki = 0; ki < s.k; ++ki)
      for (int kj = 0; kj < s.k; ++kj) {
        const float* row = cols + ((std::size_t(c) * s.k + ki) * s.k + kj) * oh * ow;
        for (int r = 0; r < oh; ++r) {
          float* out = dx + (std::size_t(c) * s.in_h + r + ki) * s.in_w + kj;
          for (int q = 0; q < ow; ++q) out[q] += row[std::size_t(r) * ow + q];
        }
      }
}

// A plane's sum in double, over 8 lanes: one chain of adds would wait out
// each add's latency, and the compiler may not reorder a sum by itself.
double plane_sum(const float* plane, int n) {
  double lanes[8] = {};
  int q = 0;
  for (; q + 8 <= n; q += 8)
    for (int l = 0; l < 8; ++l) lanes[l] += plane[q + l];
  double sum = 0;
  for (double lane : lanes) sum += lane;
  for (; q < n; ++q) sum += plane[q];
  return sum;
}

}  // namespace

std::size_t conv_scratch(const ConvShape& s) { return s.patch() * std::size_t(s.out_h()) * s.out_w(); }

DDP_CPU_CLONES
void conv2d_forward(const float* x, const float* w, const float* b, float* y, float* cols, int batch,
                    const ConvShape& s) {
  const int spatial = s.out_h() * s.out_w(), patch = int(s.patch());
  for (int i = 0; i < batch; ++i) {
    float* yi = y + std::size_t(i) * s.out_size();
    for (int o = 0; o < s.out_c; ++o) std::fill(yi + std::size_t(o) * spatial, yi + std::size_t(o + 1) * spatial, b[o]);
    im2col(x + std::size_t(i) * s.in_size(), cols, s);
    // y_i [out_c x spatial] += W [out_c x patch] cols [patch x spatial]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.out_c, spatial, patch, 1.0f, w, patch, cols, spatial,
                1.0f, yi, spatial);
  }
}

DDP_CPU_CLONES
void conv2d_backward(const float* x, const float* w, const float* dy, float* dw, float* db, float* dx, float* cols,
                     int batch, const ConvShape& s) {
  const int spatial = s.out_h() * s.out_w(), patch = int(s.patch());
  for (int i = 0; i < batch; ++i) {
    const float* dyi = dy + std::size_t(i) * s.out_size();
    for (int o = 0; o < s.out_c; ++o) db[o] += float(plane_sum(dyi + std::size_t(o) * spatial, spatial));
    im2col(x + std::size_t(i) * s.in_size(), cols, s);
    // dW [out_c x patch] += dY_i [out_c x spatial] cols^T [spatial x patch]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s.out_c, patch, spatial, 1.0f, dyi, spatial, cols, spatial,
                1.0f, dw, patch);
    if (!dx) continue;
    // dcols [patch x spatial] = W^T [patch x out_c] dY_i [out_c x spatial], into the same scratch
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, patch, spatial, s.out_c, 1.0f, w, patch, dyi, spatial, 0.0f,
                cols, spatial);
    col2im(cols, dx + std::size_t(i) * s.in_size(), s);
  }
}

DDP_CPU_CLONES
void relu_max_pool2_forward(const float* x, float* y, int* where, int planes, int h, int w) {
  const int ph = h / 2, pw = w / 2;
  for (int p = 0; p < planes; ++p)
    for (int i = 0; i < ph; ++i) {
      const int row = 2 * i * w;  // the window's top-left, in the plane
      const float* top = x + std::size_t(p) * h * w + row;
      const float* bottom = top + w;
      float* out = y + (std::size_t(p) * ph + i) * pw;
      int* at_out = where + (std::size_t(p) * ph + i) * pw;
      for (int j = 0; j < pw; ++j) {
        // The first maximum in row-major order (strictly greater replaces),
        // as selects rather than branches, so that the loop vectorises.
        const float a = top[2 * j], b = top[2 * j + 1], c = bottom[2 * j], d = bottom[2 * j + 1];
        const bool b_wins = b > a;
        const float ab = b_wins ? b : a;
        const bool c_wins = c > ab;
        const float abc = c_wins ? c : ab;
        const bool d_wins = d > abc;
        const float m = d_wins ? d : abc;
        const int at = d_wins ? w + 1 : c_wins ? w : b_wins ? 1 : 0;
        out[j] = m > 0.0f ? m : 0.0f;
        at_out[j] = m > 0.0f ? row + 2 * j + at : -1;
      }
    }
}

DDP_CPU_CLONES
void relu_max_pool2_backward(const float* dy, const int* where, float* dx, int planes, int h, int w) {
  const std::size_t per_plane = std::size_t(h / 2) * (w / 2);
  std::fill(dx, dx + std::size_t(planes) * h * w, 0.0f);
  for (int p = 0; p < planes; ++p)
    for (std::size_t i = 0; i < per_plane; ++i) {
      const std::size_t out = std::size_t(p) * per_plane + i;
      if (where[out] >= 0) dx[std::size_t(p) * h * w + std::size_t(where[out])] = dy[out];  // windows do not overlap
    }
}

DDP_CPU_CLONES
void dropout_forward(const float* x, float* y, float* mask, int rows, int width, float p, const DropoutKey& key) {
  for (int r = 0; r < rows; ++r)
    for (int u = 0; u < width; ++u) {
      const std::size_t i = std::size_t(r) * width + u;
      mask[i] = dropout_scale(key.seed, key.layer, *key.round, key.sample[r], u, p);
      y[i] = x[i] * mask[i];
    }
}

}  // namespace ddp::train::cpu
