// ddp-train: the native C++ data-parallel trainer. This release ships its
// skeleton only: the build (CPU always, CUDA + NCCL when the toolkit exists)
// and the command line. Training arrives with its own issue.
#include <cstdio>
#include <cstring>

#include "ddp/version.hpp"
#include "gpu_info.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--version") == 0)) {
    std::printf("ddp-train %s\n", ddp::kVersion);
    std::printf("gpu backend: %s\n", ddp::train::gpu_backend_description().c_str());
    return 0;
  }
  std::fprintf(stderr,
               "ddp-train: training is not in this release yet (only --version works); "
               "use a PyTorch script with srun --ddp or ddp-agent meanwhile\n");
  return 2;
}
