#include "workers/run_files.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "ddp/wire/progress_file.hpp"

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
  return create_progress_file(progress_file(attempt, rank));
}

void RunFiles::remove_all() const {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace ddp::agent
