#include "gpu_info.hpp"

namespace ddp::train {
std::string gpu_backend_description() { return "not built (no CUDA toolkit with NCCL at build time)"; }
}  // namespace ddp::train
