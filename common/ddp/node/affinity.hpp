// CPU pinning (sched_setaffinity) from the CPU lists in a plan ("0-3,8").
#pragma once

#include <sched.h>

#include <string_view>

#include "ddp/base/result.hpp"

namespace ddp {

// The mask for a CPU list; errors for garbage or CPUs beyond CPU_SETSIZE.
Result<cpu_set_t> cpu_mask(std::string_view cpu_list);

// Pins the calling process (and what it execs) to `cpu_list`.
Status pin_to(std::string_view cpu_list);

}  // namespace ddp
