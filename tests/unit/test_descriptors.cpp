// What a process passes on when it execs (ddp/node/descriptors.hpp): the
// walk of /proc/self/fd that stands in for close_range() where the kernel or
// a seccomp filter refuses it, run in a forked child as the plugin runs it
// in slurmstepd's task, and seen from the program it execs.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <sstream>
#include <string>

#include "ddp/node/descriptors.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {

// In a child: `extra` descriptors open without O_CLOEXEC (spread up to fd
// 900, so the walk takes several reads of the directory), then `mark`, then
// exec of ls on /proc/self/fd. What ls listed, one descriptor a line.
template <class Mark>
std::set<int> seen_after_exec(int extra, Mark mark) {
  int out[2];
  ck_assert_int_eq(::pipe2(out, O_CLOEXEC), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    for (int i = 0; i < extra; ++i) {
      const int fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: as slurmstepd may leave one
      if (fd < 0 || ::dup2(fd, 100 + i * 4) < 0) ::_exit(90);
      ::close(fd);
    }
    if (::dup2(out[1], 1) < 0) ::_exit(91);
    if (!mark()) ::_exit(92);
    ::execl("/bin/ls", "ls", "-1", "/proc/self/fd", static_cast<char*>(nullptr));
    ::_exit(93);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  ::close(out[0]);
  int status = 0;
  ck_assert_int_eq(::waitpid(child, &status, 0), child);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed: status %d", status);
  std::set<int> fds;
  std::istringstream lines(text);
  for (int fd; lines >> fd;) fds.insert(fd);
  return fds;
}

}  // namespace

// The walk alone, as when close_range() fails: ls sees 0, 1, 2 and the
// descriptor it opened itself to read /proc/self/fd, none of the 200 the
// child held.
START_TEST(the_walk_leaves_only_stdio_open_across_exec) {
  const auto fds = seen_after_exec(200, [] { return cloexec_by_walk(3); });
  ck_assert_msg(fds.size() == 4 && fds.count(0) && fds.count(1) && fds.count(2) && fds.count(3),
                "after the walk ls saw %zu descriptors (expected 0, 1, 2 and its own 3)", fds.size());
  // Without it, they would have been passed on: the test can tell.
  const auto leaked = seen_after_exec(200, [] { return true; });
  ck_assert_uint_ge(leaked.size(), 200);
}
END_TEST

START_TEST(close_range_or_the_walk_leaves_only_stdio_open) {
  const auto fds = seen_after_exec(5, [] { return cloexec_from(3); });
  ck_assert_uint_eq(fds.size(), 4);
  // Descriptors below `first` stay: what a caller means to pass.
  const auto kept = seen_after_exec(1, [] { return cloexec_by_walk(101); });
  ck_assert(kept.count(100));
}
END_TEST

Suite* descriptors_suite() {
  return make_suite("descriptors", {the_walk_leaves_only_stdio_open_across_exec,
                                    close_range_or_the_walk_leaves_only_stdio_open});
}
