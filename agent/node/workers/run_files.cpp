#include "node/workers/run_files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "ddp/wire/progress_file.hpp"

namespace ddp::agent {

namespace {

// mkdir that takes only a new directory (mode 0700); one that exists is
// fine only inside our own private directory, where nobody else can make it.
Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return Ok{};
  return fail("cannot create " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<RunFiles> RunFiles::make() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string parent = tmp && *tmp ? tmp : "/tmp";
  std::string name = parent + "/ddp-agent-" + std::to_string(getuid()) + "-XXXXXX";
  std::vector<char> buffer(name.begin(), name.end());
  buffer.push_back('\0');
  if (!::mkdtemp(buffer.data()))
    return fail("cannot create the agent's private directory in " + parent + " (TMPDIR): " + std::strerror(errno));
  return RunFiles(buffer.data());
}

std::string RunFiles::rank_dir(std::uint32_t attempt, std::uint32_t rank) const {
  return dir_ + "/attempt_" + std::to_string(attempt) + "/rank_" + std::to_string(rank);
}

std::string RunFiles::error_file(std::uint32_t attempt, std::uint32_t rank) const {
  return made() ? rank_dir(attempt, rank) + "/error.json" : "";
}

std::string RunFiles::progress_file(std::uint32_t attempt, std::uint32_t rank) const {
  return made() ? rank_dir(attempt, rank) + "/progress" : "";
}

std::string RunFiles::nccl_stats_file(std::uint32_t attempt, std::uint32_t rank) const {
  return made() ? rank_dir(attempt, rank) + "/nccl" : "";
}

Status RunFiles::prepare(std::uint32_t attempt, std::uint32_t rank, bool progress) const {
  if (!made()) return fail("the agent has no private directory for its run files");
  if (auto ok = make_dir(dir_ + "/attempt_" + std::to_string(attempt)); !ok) return ok;
  if (auto ok = make_dir(rank_dir(attempt, rank)); !ok) return ok;
  if (!progress) return Ok{};
  return create_progress_file(progress_file(attempt, rank));
}

RunFiles::RunFiles(RunFiles&& other) noexcept
    : dir_(std::exchange(other.dir_, {})), keep_(std::exchange(other.keep_, false)) {}

RunFiles& RunFiles::operator=(RunFiles&& other) noexcept {
  if (this != &other) {
    remove_unless_kept();
    dir_ = std::exchange(other.dir_, {});
    keep_ = std::exchange(other.keep_, false);
  }
  return *this;
}

RunFiles::~RunFiles() { remove_unless_kept(); }

void RunFiles::remove_unless_kept() noexcept {
  if (!made() || keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace ddp::agent
