// A program the plugin runs as root (BadNodeHook=, ddp.conf(5)): opened once,
// checked on what was opened, and executed from that descriptor, so that
// nothing can be put in its place between the check and the run.
//
// Opened one name at a time from "/", each name with openat2's
// RESOLVE_NO_SYMLINKS (O_NOFOLLOW where the kernel has no openat2): no
// symbolic link anywhere on the path, since whoever could change a link could
// change the program. Each directory, as opened, owned by root and writable
// by root alone (a sticky directory such as /tmp is refused too: others can
// write to it); the program a regular file, owned by root, executable, and
// writable by root alone.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "ddp/base/result.hpp"

namespace ddp {

class TrustedProgram {
 public:
  TrustedProgram(int fd, std::string path, bool script) : fd_(fd), path_(std::move(path)), script_(script) {}
  TrustedProgram(TrustedProgram&& other) noexcept;
  TrustedProgram& operator=(TrustedProgram&& other) noexcept;
  TrustedProgram(const TrustedProgram&) = delete;
  TrustedProgram& operator=(const TrustedProgram&) = delete;
  ~TrustedProgram();

  int fd() const { return fd_; }  // close-on-exec; read-only
  const std::string& path() const { return path_; }
  // It starts with "#!": the kernel hands its interpreter /dev/fd/N, so the
  // descriptor must stay open across the exec (an ELF program needs it not).
  bool script() const { return script_; }

 private:
  int fd_ = -1;
  std::string path_;
  bool script_ = false;
};

// `path` (absolute, without "." or ".." or empty names) opened and checked as
// above; `what` names it in messages ("BadNodeHook"), each of which names the
// path and the fix. `owner`: the user besides root whose files and
// directories are trusted (the unit tests, which may not run as root).
Result<TrustedProgram> open_trusted_program(const std::string& path, std::string_view what, uid_t owner = 0);

}  // namespace ddp
