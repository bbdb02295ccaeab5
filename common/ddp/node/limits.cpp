#include "ddp/node/limits.hpp"

namespace ddp {

std::optional<rlimit> raise_open_files_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return std::nullopt;
  const rlimit original = lim;
  lim.rlim_cur = lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) return std::nullopt;
  return original;
}

}  // namespace ddp
