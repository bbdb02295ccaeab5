#include "ddp/wire/nccl_stats.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace ddp {

namespace {

// "NAME=DIGITS" at the front of `text`, the rest after it.
std::optional<std::uint64_t> take(std::string_view& text, std::string_view name) {
  if (text.substr(0, name.size()) != name || text.size() <= name.size() || text[name.size()] != '=')
    return std::nullopt;
  text.remove_prefix(name.size() + 1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(std::size_t(end - text.data()));
  return value;
}

}  // namespace

void format_nccl_stats(const NcclStats& stats, char (&line)[kNcclStatsLine]) {
  std::memset(line, ' ', kNcclStatsLine);
  const int n = std::snprintf(line, kNcclStatsLine, "collectives=%llu gpu_ns=%llu",
                              static_cast<unsigned long long>(stats.collectives),
                              static_cast<unsigned long long>(stats.gpu_ns));
  if (n >= 0 && std::size_t(n) < kNcclStatsLine - 1) line[n] = ' ';  // snprintf's NUL: a blank again
  line[kNcclStatsLine - 1] = '\n';
}

std::optional<NcclStats> parse_nccl_stats(std::string_view text) {
  NcclStats stats;
  const auto collectives = take(text, "collectives");
  if (!collectives || text.empty() || text.front() != ' ') return std::nullopt;
  text.remove_prefix(1);
  const auto gpu_ns = take(text, "gpu_ns");
  if (!gpu_ns || text.find_first_not_of(" \n") != std::string_view::npos) return std::nullopt;
  stats.collectives = *collectives;
  stats.gpu_ns = *gpu_ns;
  return stats;
}

std::optional<std::string> create_nccl_stats_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create the collective-time file " + path + ": " + std::strerror(errno);
  ::close(fd);
  return std::nullopt;
}

std::optional<NcclStats> read_nccl_stats(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char line[kNcclStatsLine];
  const ssize_t n = ::pread(fd, line, sizeof line, 0);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  return parse_nccl_stats(std::string_view(line, std::size_t(n)));
}

}  // namespace ddp
