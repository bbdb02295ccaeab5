// ddp-gpu-allreduce-bw: NCCL all-reduce bandwidth, float32 sum, out of place,
// 4 KiB to 256 MiB. Two modes:
//   single process (default): every GPU visible to this process, one rank per
//     GPU, ncclCommInitAll.
//   multi process (--rank R --nranks N --id-file PATH [--device D]): one rank
//     per process on GPU D (default 0). Rank 0 writes the ncclUniqueId to PATH
//     (PATH.tmp, then rename) and removes it once every rank has joined; the
//     others wait up to 60 s for it, then ncclCommInitRank. Ranks sharing one
//     GPU need a distinct NCCL_HOSTID each (NCCL then connects them by socket).
// Prints nccl-tests' two numbers (github.com/NVIDIA/nccl-tests, its PERFORMANCE.md):
//   algbw = bytes / time
//   busbw = algbw * 2 (n - 1) / n   (what each link carries in a ring; compare
//                                    it with the hardware's link bandwidth)
// and checks every result (each rank sends rank + 1, so each element must be
// n (n + 1) / 2); every rank checks its own output and the counts are summed
// over the ranks. Rank 0 prints; other ranks print only errors. The exit status
// is non-zero if any element on any rank is wrong.
// Usage: ddp-gpu-allreduce-bw [iterations]
//        ddp-gpu-allreduce-bw --rank R --nranks N --id-file PATH [--device D] [--iterations I]
#include <cuda_runtime.h>
#include <nccl.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

char g_who[64] = "ddp-gpu-allreduce-bw";  // error prefix; names the rank in multi-process mode

__attribute__((format(printf, 1, 2))) [[noreturn]] void die(const char* fmt, ...) {
  std::fprintf(stderr, "%s: ", g_who);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::exit(1);
}

}  // namespace

#define CUDA_CHECK(call)                                                                                   \
  do {                                                                                                     \
    const cudaError_t err_ = (call);                                                                       \
    if (err_ != cudaSuccess)                                                                               \
      die("CUDA error at %s:%d: %s: %s; check nvidia-smi and CUDA_VISIBLE_DEVICES", __FILE__, __LINE__, #call, \
          cudaGetErrorString(err_));                                                                       \
  } while (0)

#define NCCL_CHECK(call)                                                                                     \
  do {                                                                                                       \
    const ncclResult_t res_ = (call);                                                                        \
    if (res_ != ncclSuccess)                                                                                 \
      die("NCCL error at %s:%d: %s: %s; rerun with NCCL_DEBUG=INFO for details", __FILE__, __LINE__, #call, \
          ncclGetErrorString(res_));                                                                         \
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

namespace {

struct Options {
  int iterations = 20;
  bool multi = false;  // any of --rank, --nranks, --id-file given
  int rank = -1;
  int nranks = -1;
  int device = -1;  // -1: not given
  std::string id_file;
};

// One rank this process drives: all GPUs in single-process mode, one otherwise.
struct Local {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
  unsigned long long* bad = nullptr;
};

void usage(FILE* out, const char* argv0) {
  std::fprintf(out,
               "usage: %s [iterations]\n"
               "         one process, every visible GPU (ncclCommInitAll)\n"
               "       %s --rank R --nranks N --id-file PATH [--device D] [--iterations I]\n"
               "         one process per rank, each on GPU D (default 0); start all N with the same PATH,\n"
               "         a file every rank can see that does not exist yet (rank 0 writes it, then removes it)\n"
               "       iterations: timed all-reduces per size, >= 1 (default 20)\n",
               argv0, argv0);
}

int parse_int(const char* text, const char* what, int min) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > 1000000000L)
    die("%s '%s': want an integer >= %d (see --help)", what, text, min);
  return int(v);
}

Options parse(int argc, char** argv) {
  Options o;
  bool have_iterations = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) die("%s needs a value (see --help)", arg.c_str());
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout, argv[0]);
      std::exit(0);
    } else if (arg == "--rank") {
      o.rank = parse_int(value(), "--rank", 0);
      o.multi = true;
    } else if (arg == "--nranks") {
      o.nranks = parse_int(value(), "--nranks", 1);
      o.multi = true;
    } else if (arg == "--id-file") {
      o.id_file = value();
      o.multi = true;
    } else if (arg == "--device") {
      o.device = parse_int(value(), "--device", 0);
    } else if (arg == "--iterations" || (arg[0] != '-' && !have_iterations)) {
      o.iterations = parse_int(arg == "--iterations" ? value() : argv[i], "iterations", 1);
      have_iterations = true;
    } else {
      usage(stderr, argv[0]);
      die("unknown argument '%s': see the usage above", arg.c_str());
    }
  }
  if (o.multi) {
    if (o.rank < 0 || o.nranks < 1 || o.id_file.empty())
      die("multi-process mode needs all of --rank R, --nranks N and --id-file PATH (see --help)");
    if (o.rank >= o.nranks) die("--rank %d is not below --nranks %d: ranks are 0..N-1", o.rank, o.nranks);
    if (o.device < 0) o.device = 0;
    std::snprintf(g_who, sizeof g_who, "ddp-gpu-allreduce-bw[rank %d]", o.rank);
  } else if (o.device >= 0) {
    die("--device is for multi-process mode only; single-process mode uses every visible GPU "
        "(choose them with CUDA_VISIBLE_DEVICES)");
  }
  return o;
}

int device_count() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess)
    die("no usable CUDA device (cudaGetDeviceCount: %s); check nvidia-smi, the driver and CUDA_VISIBLE_DEVICES",
        cudaGetErrorString(err));
  if (n < 1) die("no CUDA device visible; check nvidia-smi and CUDA_VISIBLE_DEVICES");
  return n;
}

// Rank 0: PATH.tmp, then rename, so a reader never sees half an id.
void write_id(const std::string& path, const ncclUniqueId& id) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) die("cannot create %s: %s; --id-file must be in a writable directory", tmp.c_str(), std::strerror(errno));
  const bool written = std::fwrite(&id, sizeof id, 1, f) == 1;
  if (std::fclose(f) != 0 || !written)
    die("cannot write %s: %s; check the file system holding --id-file", tmp.c_str(), std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    die("cannot rename %s to %s: %s; check the directory holding --id-file", tmp.c_str(), path.c_str(),
        std::strerror(errno));
}

// Other ranks: poll for rank 0's file for up to `wait`.
ncclUniqueId read_id(const std::string& path, std::chrono::seconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      ncclUniqueId id;
      const size_t got = std::fread(&id, 1, sizeof id, f);
      std::fclose(f);
      if (got != sizeof id)
        die("%s holds %zu bytes, not an ncclUniqueId (%zu bytes); delete it and start all ranks again", path.c_str(),
            got, sizeof id);
      return id;
    }
    if (errno != ENOENT)
      die("cannot read %s: %s; every rank needs read access to --id-file", path.c_str(), std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline)
      die("no NCCL id in %s after %lld s; check that rank 0 is running with the same --id-file on a file system "
          "this rank can see, and whether it failed",
          path.c_str(), static_cast<long long>(wait.count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int warmup = 5;
  const int visible = device_count();

  std::vector<Local> locals;
  int n = 0;  // ranks in the communicator
  if (!o.multi) {
    n = visible;
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, nullptr));  // devices 0..n-1, rank i on device i
    for (int i = 0; i < n; ++i) {
      Local l;
      l.device = i;
      l.rank = i;
      l.comm = comms[i];
      locals.push_back(l);
    }
  } else {
    n = o.nranks;
    if (o.device >= visible)
      die("--device %d, but only %d CUDA device(s) are visible; use 0..%d or check CUDA_VISIBLE_DEVICES", o.device,
          visible, visible - 1);
    CUDA_CHECK(cudaSetDevice(o.device));
    ncclUniqueId id;
    if (o.rank == 0) {
      NCCL_CHECK(ncclGetUniqueId(&id));
      write_id(o.id_file, id);
    } else {
      id = read_id(o.id_file, std::chrono::seconds(60));
    }
    Local l;
    l.device = o.device;
    l.rank = o.rank;
    const ncclResult_t res = ncclCommInitRank(&l.comm, n, id, o.rank);
    // Init returns once every rank has joined, so nobody needs the file any
    // more; and after a failure it must not mislead the next run.
    if (o.rank == 0) std::remove(o.id_file.c_str());
    if (res != ncclSuccess)
      die("ncclCommInitRank (%d ranks) failed: %s; ranks sharing a GPU need distinct NCCL_HOSTID values "
          "(NCCL_DEBUG=INFO says more)",
          n, ncclGetErrorString(res));
    locals.push_back(l);
  }
  const bool lead = !o.multi || o.rank == 0;

  const size_t max_bytes = size_t(256) << 20;
  const size_t max_count = max_bytes / sizeof(float);
  for (Local& l : locals) {
    CUDA_CHECK(cudaSetDevice(l.device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&l.send, max_bytes));
    CUDA_CHECK(cudaMalloc(&l.recv, max_bytes));
    CUDA_CHECK(cudaMalloc(&l.bad, sizeof(unsigned long long)));
    fill_kernel<<<1024, 256, 0, l.stream>>>(l.send, float(l.rank + 1), max_count);
    CUDA_CHECK(cudaGetLastError());
  }
  auto sync_all = [&] {
    for (const Local& l : locals) {
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaStreamSynchronize(l.stream));
    }
  };
  sync_all();

  if (lead) {
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    const char* hostid = std::getenv("NCCL_HOSTID");
    if (!o.multi)
      std::printf("# mode: single process, %d GPU(s), rank i on device i (ncclCommInitAll)\n", n);
    else
      std::printf("# mode: multi process, %d rank(s), rank 0 on device %d (ncclCommInitRank, id file %s)%s%s\n", n,
                  o.device, o.id_file.c_str(), hostid ? ", NCCL_HOSTID=" : "", hostid ? hostid : "");
    std::printf("# ddp-gpu-allreduce-bw: %d %s, NCCL %d.%d.%d, float32 sum out of place, %d iterations per size\n", n,
                o.multi ? "rank(s)" : "GPU(s)", version / 10000, version / 100 % 100, version % 100, o.iterations);
    for (const Local& l : locals) {
      cudaDeviceProp prop{};
      CUDA_CHECK(cudaGetDeviceProperties(&prop, l.device));
      if (!o.multi)
        std::printf("#   GPU %d: %s\n", l.device, prop.name);
      else
        std::printf("#   rank 0: GPU %d: %s (other ranks' GPUs not listed)\n", l.device, prop.name);
    }
    if (n == 1)
      std::printf("#   one %s: busbw is 0 by definition (nothing crosses a link)\n", o.multi ? "rank" : "GPU");
    std::printf("# %12s %12s %12s %12s %12s %8s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
                "wrong");
  }

  const float want = float(n) * float(n + 1) / 2.0f;
  bool all_right = true;
  std::vector<unsigned long long> mine(locals.size()), total(locals.size());
  for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 2) {
    const size_t count = bytes / sizeof(float);
    auto run = [&](int times) {
      for (int t = 0; t < times; ++t) {
        // With several local ranks the group makes their calls one collective
        // instead of each waiting for the others; with one it changes nothing.
        NCCL_CHECK(ncclGroupStart());
        for (const Local& l : locals)
          NCCL_CHECK(ncclAllReduce(l.send, l.recv, count, ncclFloat, ncclSum, l.comm, l.stream));
        NCCL_CHECK(ncclGroupEnd());
      }
      sync_all();
    };
    run(warmup);
    const auto start = std::chrono::steady_clock::now();
    run(o.iterations);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.iterations;

    // Each rank counts its own wrong elements, then the counts are summed over
    // all ranks so that rank 0 can report them and every rank fails with them.
    for (size_t i = 0; i < locals.size(); ++i) {
      const Local& l = locals[i];
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaMemsetAsync(l.bad, 0, sizeof(unsigned long long), l.stream));
      check_kernel<<<1024, 256, 0, l.stream>>>(l.recv, want, count, l.bad);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaMemcpyAsync(&mine[i], l.bad, sizeof mine[i], cudaMemcpyDeviceToHost, l.stream));
    }
    NCCL_CHECK(ncclGroupStart());
    for (const Local& l : locals) NCCL_CHECK(ncclAllReduce(l.bad, l.bad, 1, ncclUint64, ncclSum, l.comm, l.stream));
    NCCL_CHECK(ncclGroupEnd());
    for (size_t i = 0; i < locals.size(); ++i) {
      const Local& l = locals[i];
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaMemcpyAsync(&total[i], l.bad, sizeof total[i], cudaMemcpyDeviceToHost, l.stream));
    }
    sync_all();
    unsigned long long own = 0;
    for (size_t i = 0; i < locals.size(); ++i) {
      own += mine[i];
      if (o.multi && mine[i] != 0)
        std::fprintf(stderr, "%s: %llu wrong element(s) of %zu at %zu bytes (want %g everywhere)\n", g_who, mine[i],
                     count, bytes, double(want));
    }
    const unsigned long long wrong = total[0];
    all_right = all_right && wrong == 0 && own == 0;

    if (lead) {
      const double algbw = double(bytes) / seconds / 1e9;
      const double busbw = algbw * 2.0 * (n - 1) / n;
      std::printf("  %12zu %12zu %12.1f %12.2f %12.2f %8llu\n", bytes, count, seconds * 1e6, algbw, busbw, wrong);
      std::fflush(stdout);
    }
  }

  for (Local& l : locals) {
    CUDA_CHECK(cudaSetDevice(l.device));
    CUDA_CHECK(cudaFree(l.send));
    CUDA_CHECK(cudaFree(l.recv));
    CUDA_CHECK(cudaFree(l.bad));
    CUDA_CHECK(cudaStreamDestroy(l.stream));
    NCCL_CHECK(ncclCommDestroy(l.comm));
  }
  if (lead) std::printf("# %s\n", all_right ? "all results correct" : "WRONG RESULTS: see the 'wrong' column");
  return all_right ? 0 : 1;
}
