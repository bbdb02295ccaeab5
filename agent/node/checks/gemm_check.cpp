// The compute check: single-precision GEMMs of 384 x 384 with OpenBLAS on
// every CPU this process may run on (the step's cpuset), for the time node 0
// asked; the rate over the whole wall time, so that a cpu cgroup quota or
// a throttled clock shows as it would to the workers. OpenBLAS is loaded
// here, by its soname (Debian's libopenblas0, which ddp-train needs too):
// linked into ddp-agent, it would start its threads in every agent.
#include <cblas.h>  // the functions' types only
#include <dlfcn.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "node/checks/checks.hpp"
#include "ddp/base/parse.hpp"

namespace ddp::agent {

int run_gemm_check(int argc, char** argv) {
  const auto ms = argc == 3 ? parse_uint(argv[2], 1, 60000, "--preflight-gemm") : Result<std::uint64_t>(fail("usage"));
  if (!ms) {
    std::printf("usage: ddp-agent --preflight-gemm MILLISECONDS (the pre-flight's compute check)\n");
    return 2;
  }
  void* blas = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  const auto sgemm = blas ? reinterpret_cast<decltype(&cblas_sgemm)>(::dlsym(blas, "cblas_sgemm")) : nullptr;
  const auto set_threads =
      blas ? reinterpret_cast<decltype(&openblas_set_num_threads)>(::dlsym(blas, "openblas_set_num_threads")) : nullptr;
  if (!sgemm || !set_threads) {
    std::printf("cannot load OpenBLAS (libopenblas.so.0): %s; install libopenblas0\n", ::dlerror());
    return 1;
  }
  cpu_set_t cpus;
  const int threads = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  set_threads(threads);
  constexpr int n = 384;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  const auto gemm = [&] {
    sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  gemm();  // warm: threads started, pages touched
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now(), until = start + std::chrono::milliseconds(*ms);
  std::uint64_t calls = 0;
  while (Clock::now() < until) gemm(), ++calls;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("mflops=%llu\n", static_cast<unsigned long long>(2.0 * n * n * n * double(calls) / seconds / 1e6));
  return 0;
}

}  // namespace ddp::agent
