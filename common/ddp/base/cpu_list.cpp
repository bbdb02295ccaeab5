#include "ddp/base/cpu_list.hpp"

#include <algorithm>
#include <charconv>

#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

// CPU numbers we accept in a list: far above any machine Linux runs on
// (NR_CPUS is at most 8192), low enough that "0-4294967295" cannot make us
// allocate gigabytes.
constexpr unsigned kMaxCpu = 65535;

}  // namespace

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::vector<unsigned> sorted(cpus);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

Result<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
  const std::string_view list = trim(text);
  std::vector<unsigned> cpus;
  if (list.empty()) return cpus;
  const auto bad = [&](std::string_view item, const std::string& why) {
    return fail("'" + std::string(list) + "' is not a CPU list: '" + std::string(item) + "' " + why +
                "; write it like 0-3,8 (CPU numbers 0 to " + std::to_string(kMaxCpu) + ")");
  };
  const auto number = [](std::string_view digits, unsigned& value) {
    if (digits.empty()) return false;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return ec == std::errc() && ptr == digits.data() + digits.size() && value <= kMaxCpu;
  };
  for (const auto item : split_list(list)) {
    const auto dash = item.find('-');
    unsigned low = 0, high = 0;
    if (dash == std::string_view::npos) {
      if (!number(item, low)) return bad(item, "is not a CPU number or a range LOW-HIGH");
      high = low;
    } else {
      if (!number(item.substr(0, dash), low) || !number(item.substr(dash + 1), high))
        return bad(item, "is not a CPU number or a range LOW-HIGH");
      if (low > high) return bad(item, "is a range whose low end is above its high end");
    }
    for (unsigned cpu = low; cpu <= high; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace ddp
