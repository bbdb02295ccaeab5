// What GPU support this build of ddp-train carries. Compiled from cuda/ when
// the CUDA toolkit and NCCL were found, else from gpu_info_none.cpp.
#pragma once

#include <string>

namespace ddp::train {
std::string gpu_backend_description();
}
