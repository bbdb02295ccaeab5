// The kernel's cpulist format ("0-3,8": taskset -c, cpuset.cpus,
// Cpus_allowed_list), written and read in one place: the binding plans in it,
// the plan carries it to the agent, the agent pins workers from it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp {

// {0,1,2,3,8} -> "0-3,8": the kernel's cpulist format (taskset -c, cpuset.cpus,
// Cpus_allowed_list). Sorts and drops duplicates; {} -> "".
std::string cpu_list(const std::vector<unsigned>& cpus);

// The inverse: "0-3,8" -> {0,1,2,3,8}, sorted, without duplicates. Blanks
// around the whole text are ignored (sysfs files end in a newline); "" is the
// empty list. CPU numbers above 65535 and anything else are errors.
Result<std::vector<unsigned>> parse_cpu_list(std::string_view text);

}  // namespace ddp
