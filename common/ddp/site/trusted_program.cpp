#include "ddp/site/trusted_program.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

namespace ddp {

TrustedProgram::TrustedProgram(TrustedProgram&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), script_(other.script_) {}

TrustedProgram& TrustedProgram::operator=(TrustedProgram&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    script_ = other.script_;
  }
  return *this;
}

TrustedProgram::~TrustedProgram() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

struct PathFd {
  int fd = -1;
  explicit PathFd(int f) : fd(f) {}
  PathFd(const PathFd&) = delete;
  PathFd& operator=(PathFd&& other) noexcept {
    std::swap(fd, other.fd);
    return *this;
  }
  ~PathFd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

// One name below `dir`, never through a symbolic link.
int open_no_links(int dir, const std::string& name, int flags) {
#if defined(SYS_openat2) && defined(RESOLVE_NO_SYMLINKS)
  open_how how{};
  how.flags = std::uint64_t(flags);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return int(fd);
#endif
  return ::openat(dir, name.c_str(), flags | O_NOFOLLOW);  // a kernel before 5.6
}

std::string trusted_owners(uid_t owner) { return owner == 0 ? "root" : "root or uid " + std::to_string(owner); }

// The names of an absolute path, or none for a path that is not plain.
std::vector<std::string> plain_names(const std::string& path) {
  std::vector<std::string> names;
  if (path.size() < 2 || path.front() != '/') return {};
  for (std::size_t at = 1; at <= path.size();) {
    const auto end = std::min(path.find('/', at), path.size());
    const std::string name = path.substr(at, end - at);
    if (name.empty() || name == "." || name == "..") return {};
    names.push_back(name);
    at = end + 1;
  }
  return names;
}

// Why `name` below `dir` (`at` as a path) could not be opened.
std::string why_not_opened(int dir, const std::string& name, const std::string& at, const std::string& path,
                           std::string_view what) {
  const int err = errno;
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    std::string real = "the program's own path";
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      real = resolved;
      std::free(resolved);
    }
    return std::string(what) + " " + path + ": " + at + " is a symbolic link, which could be changed to lead elsewhere; " +
           "name the program by a path without links; fix with: " + std::string(what) + "=" + real +
           " in the site config";
  }
  return "cannot open " + std::string(what) + " " + path + ": " + at + ": " + std::strerror(err);
}

Status check_directory(int fd, const std::string& at, const std::string& path, std::string_view what, uid_t owner) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("cannot check " + at + " above " + std::string(what) + " " + path);
  if ((st.st_uid == 0 || st.st_uid == owner) && !(st.st_mode & (S_IWGRP | S_IWOTH))) return Ok{};
  const std::string move = "move the program to a directory that only " + trusted_owners(owner) +
                           " can write to, such as /usr/local/sbin, and name it there";
  const bool shared = (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);  // /tmp, /var/tmp
  return fail(std::string(what) + " " + path + ": the directory " + at + " must be owned by " + trusted_owners(owner) +
              " and writable by " + trusted_owners(owner) + " alone (a sticky bit is not enough), or whoever else can " +
              "write to it could put another program there; fix with: " +
              (shared ? move : "chown root " + at + " && chmod go-w " + at + ", or " + move));
}

Status check_program(int fd, const std::string& path, std::string_view what, uid_t owner) {
  const std::string name = std::string(what) + " " + path;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("cannot check " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(name + " is not a regular file; name the program itself");
  if ((st.st_uid != 0 && st.st_uid != owner) || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail(name + " must be owned by " + trusted_owners(owner) + " and writable by " + trusted_owners(owner) +
                " alone; fix with: chown root " + path + " && chmod go-w " + path);
  if (!(st.st_mode & S_IXUSR)) return fail(name + " is not executable; fix with: chmod 755 " + path);
  return Ok{};
}

}  // namespace

Result<TrustedProgram> open_trusted_program(const std::string& path, std::string_view what, uid_t owner) {
  const auto names = plain_names(path);
  if (names.empty())
    return fail(std::string(what) + " " + path + ": name the program by its absolute path, without '.', '..' or " +
                "'//' (as realpath prints it)");
  PathFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) return fail("cannot open / for " + std::string(what) + ": " + std::strerror(errno));
  if (auto ok = check_directory(dir.fd, "/", path, what, owner); !ok) return fail(ok.error());
  std::string at;
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    at += "/" + names[i];
    PathFd next(open_no_links(dir.fd, names[i], O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (next.fd < 0) return fail(why_not_opened(dir.fd, names[i], at, path, what));
    if (auto ok = check_directory(next.fd, at, path, what, owner); !ok) return fail(ok.error());
    dir = std::move(next);
  }
  // O_NONBLOCK: a FIFO put there must not hang slurmstepd in open().
  PathFd file(open_no_links(dir.fd, names.back(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (file.fd < 0) return fail(why_not_opened(dir.fd, names.back(), path, path, what));
  if (auto ok = check_program(file.fd, path, what, owner); !ok) return fail(ok.error());
  char magic[2] = {};
  const bool script = ::pread(file.fd, magic, sizeof magic, 0) == 2 && magic[0] == '#' && magic[1] == '!';
  return TrustedProgram(file.release(), path, script);
}

}  // namespace ddp
