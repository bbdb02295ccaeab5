// ddp-gpu-allreduce-bw: NCCL all-reduce bandwidth across all GPUs visible to
// one process (ncclCommInitAll), float32 sum, out of place, 4 KiB to 256 MiB.
// Prints nccl-tests' two numbers (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md):
//   algbw = bytes / time
//   busbw = algbw * 2 (n - 1) / n   (what each link carries in a ring; compare
//                                    it with the hardware's link bandwidth)
// and checks every result (each rank sends rank + 1, so each element must be
// n (n + 1) / 2). Usage: ddp-gpu-allreduce-bw [iterations]
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                                      \
  do {                                                                                        \
    const cudaError_t err_ = (call);                                                          \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr,                                                                    \
                   "ddp-gpu-allreduce-bw: CUDA error at %s:%d: %s: %s; check nvidia-smi and " \
                   "CUDA_VISIBLE_DEVICES\n",                                                  \
                   __FILE__, __LINE__, #call, cudaGetErrorString(err_));                      \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

#define NCCL_CHECK(call)                                                            \
  do {                                                                              \
    const ncclResult_t res_ = (call);                                               \
    if (res_ != ncclSuccess) {                                                      \
      std::fprintf(stderr,                                                          \
                   "ddp-gpu-allreduce-bw: NCCL error at %s:%d: %s: %s; rerun with " \
                   "NCCL_DEBUG=INFO for details\n",                                 \
                   __FILE__, __LINE__, #call, ncclGetErrorString(res_));            \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

__global__ void fill_kernel(float* x, float value, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = value;
}

// Counts elements that differ from `want`, into *bad.
__global__ void check_kernel(const float* x, float want, size_t n, unsigned long long* bad) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    if (x[i] != want) atomicAdd(bad, 1ULL);
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const int warmup = 5;
  if (iterations < 1) {
    std::fprintf(stderr, "usage: %s [iterations >= 1]\n", argv[0]);
    return 2;
  }
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  if (n < 1) {
    std::fprintf(stderr, "ddp-gpu-allreduce-bw: no CUDA device visible\n");
    return 1;
  }
  const size_t max_bytes = size_t(256) << 20;
  const size_t max_count = max_bytes / sizeof(float);

  std::vector<ncclComm_t> comms(n);
  std::vector<cudaStream_t> streams(n);
  std::vector<float*> send(n), recv(n);
  std::vector<unsigned long long*> bad(n);
  NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));  // devices 0..n-1, rank i on device i
  for (int i = 0; i < n; ++i) {
    CUDA_CHECK(cudaSetDevice(i));
    CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&send[i], max_bytes));
    CUDA_CHECK(cudaMalloc(&recv[i], max_bytes));
    CUDA_CHECK(cudaMalloc(&bad[i], sizeof(unsigned long long)));
    fill_kernel<<<1024, 256, 0, streams[i]>>>(send[i], float(i + 1), max_count);
    CUDA_CHECK(cudaGetLastError());
  }
  for (int i = 0; i < n; ++i) {
    CUDA_CHECK(cudaSetDevice(i));
    CUDA_CHECK(cudaStreamSynchronize(streams[i]));
  }

  int version = 0;
  NCCL_CHECK(ncclGetVersion(&version));
  std::printf("# ddp-gpu-allreduce-bw: %d GPU(s), NCCL %d.%d.%d, float32 sum out of place, %d iterations per size\n", n,
              version / 10000, version / 100 % 100, version % 100, iterations);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    std::printf("#   GPU %d: %s\n", i, prop.name);
  }
  if (n == 1) std::printf("#   one GPU: busbw is 0 by definition (nothing crosses a link)\n");
  std::printf("# %12s %12s %12s %12s %12s %8s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
              "wrong");

  const float want = float(n) * float(n + 1) / 2.0f;
  bool all_right = true;
  for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 2) {
    const size_t count = bytes / sizeof(float);
    auto run = [&](int times) {
      for (int t = 0; t < times; ++t) {
        // One process drives all GPUs: the group makes the n calls one
        // collective instead of n calls each waiting for the others.
        NCCL_CHECK(ncclGroupStart());
        for (int i = 0; i < n; ++i)
          NCCL_CHECK(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
        NCCL_CHECK(ncclGroupEnd());
      }
      for (int i = 0; i < n; ++i) {
        CUDA_CHECK(cudaSetDevice(i));
        CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      }
    };
    run(warmup);
    const auto start = std::chrono::steady_clock::now();
    run(iterations);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;

    unsigned long long wrong = 0;
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaMemsetAsync(bad[i], 0, sizeof(unsigned long long), streams[i]));
      check_kernel<<<1024, 256, 0, streams[i]>>>(recv[i], want, count, bad[i]);
      CUDA_CHECK(cudaGetLastError());
      unsigned long long b = 0;
      CUDA_CHECK(cudaMemcpyAsync(&b, bad[i], sizeof b, cudaMemcpyDeviceToHost, streams[i]));
      CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      wrong += b;
    }
    all_right = all_right && wrong == 0;

    const double algbw = double(bytes) / seconds / 1e9;
    const double busbw = algbw * 2.0 * (n - 1) / n;
    std::printf("  %12zu %12zu %12.1f %12.2f %12.2f %8llu\n", bytes, count, seconds * 1e6, algbw, busbw, wrong);
    std::fflush(stdout);
  }

  for (int i = 0; i < n; ++i) {
    CUDA_CHECK(cudaSetDevice(i));
    CUDA_CHECK(cudaFree(send[i]));
    CUDA_CHECK(cudaFree(recv[i]));
    CUDA_CHECK(cudaFree(bad[i]));
    CUDA_CHECK(cudaStreamDestroy(streams[i]));
    NCCL_CHECK(ncclCommDestroy(comms[i]));
  }
  std::printf("# %s\n", all_right ? "all results correct" : "WRONG RESULTS: see the 'wrong' column");
  return all_right ? 0 : 1;
}
