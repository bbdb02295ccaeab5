#include "ddp/node/descriptors.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ddp {

namespace {

// The record getdents64 writes (struct linux_dirent64, not in glibc's headers).
struct Dirent64 {
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// A descriptor number from a /proc/self/fd entry's name; -1 for "." and "..".
int fd_number(const char* name) {
  if (*name == '\0') return -1;
  int fd = 0;
  for (; *name; ++name) {
    if (*name < '0' || *name > '9' || fd > (1 << 27)) return -1;
    fd = fd * 10 + (*name - '0');
  }
  return fd;
}

void set_cloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

}  // namespace

bool cloexec_by_walk(int first) {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(Dirent64) char buf[4096];
  bool ok = true;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    // Marking a descriptor changes no entry of the directory: one pass is
    // enough, and the walk's own descriptor is close-on-exec already.
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const Dirent64*>(buf + at);
      const int fd = fd_number(entry->name);
      if (fd >= first && fd != dir) set_cloexec(fd);
      at += entry->reclen;
    }
  }
  ::close(dir);
  return ok;
}

bool cloexec_from(int first) {
  if (::syscall(SYS_close_range, unsigned(first), ~0U, CLOSE_RANGE_CLOEXEC) == 0) return true;
  return cloexec_by_walk(first);
}

}  // namespace ddp
