#include "ddp/wire/progress_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace ddp {

Status create_progress_file(const std::string& path) {
  // A new file or nothing: never through a link or into a FIFO someone else
  // put there (O_EXCL refuses any name that exists, O_NOFOLLOW a link,
  // O_NONBLOCK keeps open() from waiting on a FIFO).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return fail("cannot create the progress file " + path + ": " + std::strerror(errno));
  const timespec never[2] = {{0, 0}, {0, 0}};  // atime, mtime: the epoch
  const bool timed = ::futimens(fd, never) == 0;
  const int err = errno;
  ::close(fd);
  if (!timed) return fail("cannot set the time of the progress file " + path + ": " + std::strerror(err));
  return Ok{};
}

ProgressWriter::ProgressWriter(const std::string& path) {
  if (!path.empty()) fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
}

ProgressWriter::~ProgressWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ProgressWriter::mark(std::uint64_t step) const {
  if (fd_ < 0) return;
  char text[22];
  const int n = std::snprintf(text, sizeof text, "%-20llu\n", static_cast<unsigned long long>(step));
  if (::pwrite(fd_, text, std::size_t(n), 0) < 0) return;  // the watch then names us: nothing better to do
}

std::optional<Progress> read_progress(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  Progress p;
  p.last = std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
  // A step number: decimal digits, then blanks or a newline; anything else
  // (an empty file, text) is no step.
  char text[32] = {};
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    const std::size_t n = std::fread(text, 1, sizeof text - 1, f);
    std::fclose(f);
    std::string_view v(text, n);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\n')) v.remove_suffix(1);
    if (!v.empty() && v.size() <= 19 && v.find_first_not_of("0123456789") == std::string_view::npos)
      p.step = std::stoull(std::string(v));
  }
  return p;
}

}  // namespace ddp
