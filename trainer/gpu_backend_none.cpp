// Built when the CUDA toolkit or NCCL was not found: --device cuda says so.
#include "gpu_backend.hpp"

namespace ddp::train {

std::string gpu_backend_description() { return "none (built without the CUDA toolkit and NCCL)"; }

Result<GpuBackend> make_gpu_backend(const GpuBackendConfig&) {
  return fail("this ddp-train was built without CUDA: rebuild on a machine with the CUDA toolkit and NCCL in "
              "/usr/local/cuda (or -DDDP_CUDA=ON to make that a hard requirement), or use --device cpu");
}

}  // namespace ddp::train
