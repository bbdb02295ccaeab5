#include "workers/run_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace ddp::agent {

RunFiles::RunFiles() {
  const char* tmp = std::getenv("TMPDIR");
  dir_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/ddp-agent-" + std::to_string(getuid()) + "-" +
         std::to_string(getpid());
}

std::string RunFiles::rank_dir(std::uint32_t attempt, std::uint32_t rank) const {
  return dir_ + "/attempt_" + std::to_string(attempt) + "/rank_" + std::to_string(rank);
}

std::string RunFiles::error_file(std::uint32_t attempt, std::uint32_t rank) const {
  return rank_dir(attempt, rank) + "/error.json";
}

std::string RunFiles::progress_file(std::uint32_t attempt, std::uint32_t rank) const {
  return rank_dir(attempt, rank) + "/progress";
}

Status RunFiles::prepare(std::uint32_t attempt, std::uint32_t rank, bool progress) const {
  std::error_code ec;
  std::filesystem::create_directories(rank_dir(attempt, rank), ec);
  if (ec) return fail("cannot create " + rank_dir(attempt, rank) + ": " + ec.message());
  if (!progress) return Ok{};
  const auto path = progress_file(attempt, rank);
  if (FILE* f = std::fopen(path.c_str(), "w")) std::fclose(f);
  const timespec never[2] = {{0, 0}, {0, 0}};  // the epoch: not touched yet (duties/hang_watch.hpp)
  if (::utimensat(AT_FDCWD, path.c_str(), never, 0) != 0)
    return fail("cannot create " + path + ": " + std::strerror(errno));
  return Ok{};
}

void RunFiles::remove_all() const {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace ddp::agent
