// The workers' mode: GPU workers (one per GPU) or CPU workers; Auto, as the
// user may ask, is resolved on each node by the GPUs the step has there.
#pragma once

#include <string_view>

#include "ddp/base/result.hpp"

namespace ddp {

enum class Mode { Auto, Gpu, Cpu };
std::string_view to_string(Mode mode);
Result<Mode> parse_mode(std::string_view text);  // auto | gpu | cpu

}  // namespace ddp
