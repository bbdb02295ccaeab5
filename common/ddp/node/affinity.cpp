#include "ddp/node/affinity.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "ddp/base/cpu_list.hpp"

namespace ddp {

Result<cpu_set_t> cpu_mask(std::string_view cpu_list) {
  auto cpus = parse_cpu_list(cpu_list);
  if (!cpus) return fail(cpus.error());
  if (cpus->empty()) return fail("the CPU list '" + std::string(cpu_list) + "' is empty");
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (const unsigned cpu : *cpus) {
    if (cpu >= CPU_SETSIZE) return fail("CPU " + std::to_string(cpu) + " is beyond what sched_setaffinity can name");
    CPU_SET(cpu, &mask);
  }
  return mask;
}

Status pin_to(std::string_view cpu_list) {
  auto mask = cpu_mask(cpu_list);
  if (!mask) return fail(mask.error());
  if (::sched_setaffinity(0, sizeof(cpu_set_t), &*mask) != 0)
    return fail("sched_setaffinity(" + std::string(cpu_list) + "): " + std::strerror(errno) +
                " (outside the step's allowed CPUs?)");
  return Ok{};
}

}  // namespace ddp
