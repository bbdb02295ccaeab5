// ddp-allreduce-bench: all-reduce bandwidth of ddp-train's CPU backend (Gloo
// over TCP, the same code path the trainer's buckets take), reported with
// nccl-tests' definitions: algbw = bytes / time, busbw = algbw * 2(n-1)/n.
// Run it like a training job: ddp-agent --nproc 2 -- ddp-allreduce-bench.
// With --memcpy it runs alone and times memcpy over the same sizes instead:
// the machine's memory-copy bandwidth, the ceiling the all-reduce is read against.
#include <algorithm>
#include <cstring>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "process_group/bootstrap.hpp"
#include "process_group/cpu_collectives.hpp"

using namespace ddp::train;

int main(int argc, char** argv) {
  std::size_t min_bytes = 4096, max_bytes = std::size_t(256) << 20;
  int iterations = 20;
  bool memcpy_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--memcpy") memcpy_only = true;
    else if (a == "--min-bytes" && has_value) min_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--max-bytes" && has_value) max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--iterations" && has_value) iterations = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: ddp-allreduce-bench [--memcpy] [--min-bytes N] [--max-bytes N] [--iterations N]\n");
      return 2;
    }
  }
  if (memcpy_only) {
    std::vector<char> src(max_bytes, 1), dst(max_bytes, 0);
    std::printf("# memcpy, one thread\n# bytes median_us min_us max_us GBps\n");
    for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      std::vector<double> us;
      for (int it = -2; it < iterations; ++it) {
        const auto t0 = std::chrono::steady_clock::now();
        std::memcpy(dst.data(), src.data(), bytes);
        const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (it >= 0) us.push_back(t);
      }
      std::sort(us.begin(), us.end());
      const double median = us[us.size() / 2];
      std::printf("%zu %.1f %.1f %.1f %.3f\n", bytes, median, us.front(), us.back(), double(bytes) / (median * 1e-6) / 1e9);
    }
    return 0;
  }
  auto id = read_worker_identity([](const char* n) { return std::getenv(n); });
  if (!id || id->standalone()) {
    std::fprintf(stderr, "ddp-allreduce-bench: run it under ddp-agent --nproc N or srun --ddp (%s)\n",
                 id ? "no launcher environment" : id.error().c_str());
    return 2;
  }
  auto session = bootstrap(*id, "allreduce-bench", std::chrono::seconds(60));
  if (!session) return std::fprintf(stderr, "ddp-allreduce-bench: %s\n", session.error().c_str()), 1;
  Session s = std::move(session).value();
  auto comm = make_cpu_collectives(s, max_bytes / sizeof(float), std::getenv("DDP_NO_SHM") == nullptr, std::chrono::seconds(120));
  if (!comm) return std::fprintf(stderr, "ddp-allreduce-bench: %s\n", comm.error().c_str()), 1;
  Collectives& c = **comm;
  const int n = c.size();
  if (c.rank() == 0)
    std::printf("# %s\n# bytes median_us min_us max_us algbw_GBps busbw_GBps\n", c.name().c_str());
  // Shared-memory groups reduce in place: buckets must live in their memory,
  // as the trainer's gradients do.
  std::vector<float> own(max_bytes / sizeof(float), 1.0f);
  float* data = c.gradient_memory(own.size());
  if (!data) data = own.data();
  std::fill(data, data + own.size(), 1.0f);
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const std::size_t count = bytes / sizeof(float);
    const int iters = bytes >= (std::size_t(32) << 20) ? std::max(3, iterations / 4) : iterations;
    std::vector<double> us;
    for (int it = -2; it < iters; ++it) {  // two warm-up rounds
      (void)c.allreduce_sum(own.data(), 1);  // line the ranks up
      const auto t0 = std::chrono::steady_clock::now();
      c.start_bucket(data, count, 1.0f / float(n));
      if (auto st = c.finish_buckets(); !st) return std::fprintf(stderr, "%s\n", st.error().c_str()), 1;
      const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (it >= 0) us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    const double algbw = double(bytes) / (median * 1e-6) / 1e9;
    if (c.rank() == 0)
      std::printf("%zu %.1f %.1f %.1f %.3f %.3f\n", bytes, median, us.front(), us.back(), algbw,
                  algbw * 2.0 * (n - 1) / n);
    std::fflush(stdout);
  }
  return 0;
}
