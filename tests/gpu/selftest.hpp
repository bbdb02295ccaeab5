// The selftest's harness (ops_parity.cpp has the rules): the same inputs in
// CpuOps and CudaOps memory, and the comparison of their outputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/ops.hpp"

namespace ddp::gpu_selftest {

using ddp::train::Ops;

inline constexpr double kTolerance = 1e-4;

// The same floats in CPU-backend memory and in GPU memory.
struct Buf {
  float* c = nullptr;
  float* g = nullptr;
  std::size_t n = 0;
};
struct IntBuf {
  int* c = nullptr;
  int* g = nullptr;
  std::size_t n = 0;
};

struct Stat {
  double max_abs = 0;
  double max_rel = 0;
  int checks = 0;
  int failures = 0;
  std::string first_failure;
};

class Selftest {
 public:
  // `tolerance`: of each output's largest value (kTolerance for fp32 ops).
  Selftest(Ops& cpu, Ops& gpu, double tolerance = kTolerance) : cpu_(cpu), gpu_(gpu), tolerance_(tolerance) {}

  std::vector<float> random(std::size_t n, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return v;
  }
  std::vector<int> random_ints(std::size_t n, int bound) {
    std::uniform_int_distribution<int> dist(0, bound - 1);
    std::vector<int> v(n);
    for (int& x : v) x = dist(rng_);
    return v;
  }

  Buf make(const std::vector<float>& values) {
    Buf b{cpu_.alloc(values.size()), gpu_.alloc(values.size()), values.size()};
    cpu_.upload(b.c, values.data(), values.size());
    gpu_.upload(b.g, values.data(), values.size());
    owned_.push_back(b);
    return b;
  }
  Buf zeros(std::size_t n) {
    Buf b{cpu_.alloc(n), gpu_.alloc(n), n};
    owned_.push_back(b);
    return b;
  }
  IntBuf make_ints(const std::vector<int>& values) {
    IntBuf b{cpu_.alloc_int(values.size()), gpu_.alloc_int(values.size()), values.size()};
    cpu_.upload_int(b.c, values.data(), values.size());
    gpu_.upload_int(b.g, values.data(), values.size());
    owned_ints_.push_back(b);
    return b;
  }
  IntBuf zero_ints(std::size_t n) {
    IntBuf b{cpu_.alloc_int(n), gpu_.alloc_int(n), n};
    owned_ints_.push_back(b);
    return b;
  }

  std::vector<float> read(Ops& ops, const float* p, std::size_t n) {
    std::vector<float> h(n);
    ops.download(h.data(), p, n);
    return h;
  }

  void compare(const std::string& op, const std::string& where, const Buf& b) {
    compare_values(op, where, read(cpu_, b.c, b.n), read(gpu_, b.g, b.n));
  }

  void compare_values(const std::string& op, const std::string& where, const std::vector<float>& want,
                      const std::vector<float>& got) {
    Stat& s = stats_[op];
    ++s.checks;
    double scale = 0;
    for (float x : want) scale = std::max(scale, double(std::fabs(x)));
    if (scale == 0) scale = 1;  // an all-zero result must come back as exact zeros (to 1e-4)
    double max_abs = 0;
    bool bad = got.size() != want.size();
    for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) {
      const double err = std::fabs(double(got[i]) - double(want[i]));
      if (!(err <= tolerance_ * scale)) bad = true;  // also catches NaN
      if (std::isnan(err)) {
        max_abs = NAN;
        break;
      }
      max_abs = std::max(max_abs, err);
    }
    const double rel = max_abs / scale;
    if (std::isnan(max_abs) || max_abs > s.max_abs) s.max_abs = max_abs;
    if (std::isnan(rel) || rel > s.max_rel) s.max_rel = rel;
    if (bad) {
      ++s.failures;
      if (s.first_failure.empty()) {
        // The first differing element helps tell a layout bug from rounding.
        std::size_t i = 0;
        while (i < want.size() && i < got.size() && std::fabs(double(got[i]) - want[i]) <= tolerance_ * scale) ++i;
        char detail[256];
        if (i < want.size() && i < got.size())
          std::snprintf(detail, sizeof detail, "%s: element %zu is %.9g on the GPU, %.9g on the CPU", where.c_str(), i,
                        double(got[i]), double(want[i]));
        else
          std::snprintf(detail, sizeof detail, "%s: sizes differ", where.c_str());
        s.first_failure = detail;
      }
    }
  }

  // Prints the table; true when every op passed.
  bool report() const {
    bool all = true;
    for (const auto& [op, s] : stats_) {
      const bool pass = s.failures == 0;
      all = all && pass;
      std::printf("%s  %-22s max abs err %-10.3g max rel err %-10.3g (%d checks)\n", pass ? "PASS" : "FAIL", op.c_str(),
                  s.max_abs, s.max_rel, s.checks);
      if (!pass) std::printf("      %d failed; first: %s\n", s.failures, s.first_failure.c_str());
    }
    return all;
  }

  void release_all() {
    for (const Buf& b : owned_) {
      cpu_.release(b.c);
      gpu_.release(b.g);
    }
    for (const IntBuf& b : owned_ints_) {
      cpu_.release(b.c);
      gpu_.release(b.g);
    }
    owned_.clear();
    owned_ints_.clear();
  }

  Ops& cpu_;
  Ops& gpu_;

 private:
  double tolerance_;
  std::mt19937 rng_{20240611};
  std::map<std::string, Stat> stats_;
  std::vector<Buf> owned_;
  std::vector<IntBuf> owned_ints_;
};

inline std::string shape_text(const char* what, std::size_t a, std::size_t b = 0, std::size_t c = 0) {
  std::string s = std::string(what) + " " + std::to_string(a);
  if (b) s += "x" + std::to_string(b);
  if (c) s += "x" + std::to_string(c);
  return s;
}

// The CNN's ops (cnn_parity.cpp) for `batch` images through a convolution of shape s.
void test_cnn(Selftest& t, int batch, const ddp::train::ConvShape& s);

// The GPT's ops (gpt_parity.cpp): B sequences of T positions, C channels in
// NH heads, a vocabulary of V padded to Vp.
struct GptShape {
  int B, T, C, NH, V, Vp;
};
void test_gpt(Selftest& t, const GptShape& s);

}  // namespace ddp::gpu_selftest
