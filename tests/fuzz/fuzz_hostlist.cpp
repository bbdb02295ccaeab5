// Node lists through the plugin's bounds and Slurm's hostlist code, as the
// plugin reads SLURM_STEP_NODELIST in slurmstepd.
#include <algorithm>
#include <cctype>
#include <string>

#include "fuzz.hpp"
#include "hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Slurm's C API takes NUL-terminated strings: a list never holds a NUL.
  const std::string list(ddp::fuzz::as_text(data, size).substr(0, 512));
  if (list.find('\0') != std::string::npos) return 0;
  // SLURM_STEP_NODELIST, the user's: the strict bounds. Whatever passes them
  // parses within them (Slurm's count is checked after).
  const auto names = ddp::spank::expand_hostlist(list, ddp::spank::HostlistSource::Job);
  if (!names) {
    FUZZ_CHECK(!names.error().empty());
    return 0;
  }
  FUZZ_CHECK(!names->empty());
  // Every node the list expands to is in the list (checked for the first few:
  // a range can expand to thousands). Only for names a node can have: Slurm
  // expands some lists to hosts such as "[" that its own lookup reads as a range.
  const auto node_name = [](const std::string& name) {
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '-' || c == '_' || c == '.';
    });
  };
  for (std::size_t i = 0; i < names->size() && i < 8; ++i) {
    FUZZ_CHECK(!(*names)[i].empty());
    if (node_name((*names)[i])) FUZZ_CHECK(ddp::spank::hostlist_contains(list, (*names)[i]));
  }
  return 0;
}
