// The site's BadNodeHook as root runs it (spank/bad_node_hook.hpp): the path
// opened and checked (ddp/site/trusted_program.hpp), then each run executed
// from that descriptor, every run of a step within one deadline whatever the
// hook does. Real programs in a scratch directory only its owner can write to
// (below /run as root, as CI runs the tests; below $HOME otherwise, with the
// test's user trusted beside root).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bad_node_hook.hpp"
#include "ddp/site/trusted_program.hpp"
// Last: check.h defines a macro `fail`, which ddp/base/result.hpp declares as a function.
#include "suites.hpp"

using namespace ddp;
using spank::HookRun;

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    std::string templ = ::geteuid() == 0 ? "/run/ddp-unit-XXXXXX" : std::string(std::getenv("HOME")) + "/.ddp-unit-XXXXXX";
    ck_assert_ptr_nonnull(::mkdtemp(templ.data()));
    dir = templ;
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0755) const {
    const auto path = dir + "/" + name;
    std::ofstream(path) << text;
    ck_assert_int_eq(::chmod(path.c_str(), mode), 0);
    return path;
  }
  std::string subdir(const std::string& name, mode_t mode) const {
    const auto path = dir + "/" + name;
    ck_assert_int_eq(::mkdir(path.c_str(), 0700), 0);
    ck_assert_int_eq(::chmod(path.c_str(), mode), 0);
    return path;
  }
};

TrustedProgram open_hook(const std::string& path) {
  auto program = open_trusted_program(path, "BadNodeHook", ::getuid());
  ck_assert_msg(program.ok(), "%s", program.ok() ? "" : program.error().c_str());
  return std::move(program).value();
}

std::string refusal(const std::string& path) {
  const auto program = open_trusted_program(path, "BadNodeHook", ::getuid());
  ck_assert_msg(!program.ok(), "%s was accepted", path.c_str());
  return program.error();
}

std::vector<HookRun> runs_for(int nodes, const std::string& reason = "x") {
  std::vector<HookRun> runs;
  for (int i = 0; i < nodes; ++i)
    runs.push_back({"n" + std::to_string(i), {"DDP_BAD_NODE=n" + std::to_string(i), "DDP_BAD_NODE_REASONS=" + reason}});
  return runs;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The pid a hook wrote to `file` has ended (gone, or a zombie its parent's
// end left to init) within a second.
bool ended(const std::string& file) {
  pid_t pid = 0;
  std::ifstream(file) >> pid;
  ck_assert_int_gt(pid, 1);
  for (int i = 0; i < 100; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (!stat || text.find(") Z ") != std::string::npos) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::ostringstream text;
  for (const auto& l : lines) text << l << "\n";
  return text.str();
}

}  // namespace

// A hook that closes its output, ignores SIGTERM and sleeps, reported 100
// nodes: the step's budget (2 s here) bounds them all, its whole process
// group is killed, and the 99 nodes left are named in one line.
START_TEST(a_hook_that_closes_its_output_and_sleeps_ends_at_the_deadline) {
  const Scratch s;
  const auto hook = s.write("hook", "#!/bin/sh\necho started $DDP_BAD_NODE\nexec >&- 2>&-\ntrap '' TERM\n"
                                    "sleep 600 &\necho $! >" + s.dir + "/sleep.pid\nwait\n");
  const auto program = open_hook(hook);
  const auto t0 = std::chrono::steady_clock::now();
  const auto log = spank::run_hook(program, runs_for(100), std::chrono::seconds(2));
  const double took = seconds_since(t0);
  ck_assert_msg(took < 3.2, "the runs took %.1f s; the budget is 2 s", took);
  ck_assert_msg(took > 1.9, "the runs took %.1f s: the hook was not given its budget", took);
  ck_assert_uint_eq(log.size(), 2);
  CK_STR_EQ(log[0], "BadNodeHook " + hook + " for n0 (killed at the deadline): started n0");
  CK_CONTAINS(log[1], "every run of a step together has 2 s, spent; not run for 99 node(s): n1, n2, n3, n4, n5, ...");
  ck_assert_msg(ended(s.dir + "/sleep.pid"), "the hook's child outlived the deadline");
}
END_TEST

// A hook that prints without end: its output read 1 KiB for the log, and
// the reading never keeps the runner from the deadline.
START_TEST(a_hook_that_prints_without_end_is_cut_at_the_deadline) {
  const Scratch s;
  const auto hook = s.write("hook", "#!/bin/sh\nexec yes spam\n");
  const auto t0 = std::chrono::steady_clock::now();
  const auto log = spank::run_hook(open_hook(hook), runs_for(2), std::chrono::seconds(1));
  ck_assert_msg(seconds_since(t0) < 2.2, "the runs took %.1f s; the budget is 1 s", seconds_since(t0));
  ck_assert_uint_eq(log.size(), 2);
  const std::string head = "BadNodeHook " + hook + " for n0 (killed at the deadline): spam\nspam\n";
  ck_assert(log[0].starts_with(head));
  ck_assert_uint_le(log[0].size(), head.size() + 1024);
}
END_TEST

// A hook that leaves a child holding its output: its run ends with the hook
// (not when the output closes), and the child is killed with it.
START_TEST(a_hook_that_leaves_a_child_running_ends_with_its_run) {
  const Scratch s;
  const auto hook = s.write("hook", "#!/bin/sh\n(sleep 600; echo late) &\necho $! >" + s.dir +
                                        "/child.pid\necho reported $DDP_BAD_NODE: $DDP_BAD_NODE_REASONS\n");
  const auto t0 = std::chrono::steady_clock::now();
  const auto log = spank::run_hook(open_hook(hook), runs_for(3, "GPU at 95 \\xc2\\xb0C"), std::chrono::seconds(10));
  ck_assert_msg(seconds_since(t0) < 2, "3 runs took %.1f s", seconds_since(t0));
  ck_assert_uint_eq(log.size(), 3);
  CK_STR_EQ(log[2], "BadNodeHook " + hook + " for n2 (exit 0): reported n2: GPU at 95 \\xc2\\xb0C");
  ck_assert_msg(ended(s.dir + "/child.pid"), "the child the hook left was not killed");
}
END_TEST

// A #!/bin/sh hook runs from its descriptor (its $0 is /dev/fd/3), with the
// environment it is given and nothing of its caller's; an ELF program too.
// The log names at most kMaxLoggedRuns runs one by one, then one line.
START_TEST(a_shell_hook_and_a_program_run_from_their_descriptors) {
  const Scratch s;
  ::setenv("DDP_UNIT_CALLER", "leaked", 1);
  const auto hook = s.write("hook", "#!/bin/sh\necho \"$0 $DDP_BAD_NODE ${DDP_UNIT_CALLER:-alone}\"\n"
                                    "[ \"$DDP_BAD_NODE\" != n9 ]\n");
  const auto log = spank::run_hook(open_hook(hook), runs_for(20), std::chrono::seconds(10));
  ck_assert_uint_eq(log.size(), spank::kMaxLoggedRuns + 1);
  CK_STR_EQ(log[0], "BadNodeHook " + hook + " for n0 (exit 0): /dev/fd/3 n0 alone");
  CK_STR_EQ(log[spank::kMaxLoggedRuns], "BadNodeHook " + hook + ": 12 more run(s), 1 of them failed (not logged one by one)");
  std::filesystem::copy_file("/bin/false", s.dir + "/false");
  const auto elf = spank::run_hook(open_hook(s.dir + "/false"), runs_for(1), std::chrono::seconds(10));
  CK_STR_EQ(joined(elf), "BadNodeHook " + s.dir + "/false for n0 (exit 1)\n");
}
END_TEST

// What runs is what was checked: a file put in the hook's place after it
// was opened is not run.
START_TEST(a_hook_replaced_after_the_check_is_not_what_runs) {
  const Scratch s;
  const auto hook = s.write("hook", "#!/bin/sh\necho checked\n");
  const auto program = open_hook(hook);
  const auto other = s.write("other", "#!/bin/sh\necho swapped\n");
  ck_assert_int_eq(::rename(other.c_str(), hook.c_str()), 0);
  CK_CONTAINS(joined(spank::run_hook(program, runs_for(1), std::chrono::seconds(10))), "(exit 0): checked");
}
END_TEST

// Refused, with one message naming the path and the fix: a link anywhere on
// the path, a directory others can write to (sticky or not), a program
// others can write to or that is not one.
START_TEST(a_hook_through_a_link_or_an_open_directory_is_refused) {
  const Scratch s;
  const auto hook = s.write("hook", "#!/bin/sh\n");
  ck_assert_int_eq(::symlink(hook.c_str(), (s.dir + "/link").c_str()), 0);
  auto e = refusal(s.dir + "/link");
  CK_CONTAINS(e, "BadNodeHook " + s.dir + "/link: " + s.dir + "/link is a symbolic link");
  CK_CONTAINS(e, "fix with: BadNodeHook=" + hook + " in the site config");
  const auto real = s.subdir("real", 0755);
  s.write("real/hook", "#!/bin/sh\n");
  ck_assert_int_eq(::symlink(real.c_str(), (s.dir + "/dirlink").c_str()), 0);
  CK_CONTAINS(refusal(s.dir + "/dirlink/hook"), ": " + s.dir + "/dirlink is a symbolic link");

  const auto group = s.subdir("group", 0775);
  s.write("group/hook", "#!/bin/sh\n");
  e = refusal(group + "/hook");
  CK_CONTAINS(e, "BadNodeHook " + group + "/hook: the directory " + group + " must be owned by root");
  CK_CONTAINS(e, "fix with: chown root " + group + " && chmod go-w " + group);
  const auto sticky = s.subdir("sticky", 01777);
  s.write("sticky/hook", "#!/bin/sh\n");
  e = refusal(sticky + "/hook");
  CK_CONTAINS(e, "the directory " + sticky + " must be owned by");
  CK_CONTAINS(e, "(a sticky bit is not enough)");
  CK_CONTAINS(e, "fix with: move the program to a directory that only");
  CK_CONTAINS(refusal("/tmp/ddp-no-hook"), "the directory /tmp must be owned by");

  CK_CONTAINS(refusal(s.write("open", "#!/bin/sh\n", 0775)),
              "must be owned by root and writable by root alone; fix with: chown root " + s.dir +
                  "/open && chmod go-w " + s.dir + "/open");
  CK_CONTAINS(refusal(s.write("plain", "#!/bin/sh\n", 0644)), "is not executable; fix with: chmod 755 " + s.dir);
  CK_CONTAINS(refusal(s.dir + "/none"), "cannot open BadNodeHook " + s.dir + "/none: " + s.dir + "/none: No such file");
  CK_CONTAINS(refusal(real), "is not a regular file");
  ck_assert_int_eq(::mkfifo((s.dir + "/fifo").c_str(), 0700), 0);
  CK_CONTAINS(refusal(s.dir + "/fifo"), "is not a regular file");  // and open() did not block
  for (const std::string path : {"hook", "/usr/../bin/true", "/usr//bin/true", "/usr/bin/"})
    CK_CONTAINS(refusal(path), "name the program by its absolute path, without '.', '..' or '//'");
}
END_TEST

Suite* bad_node_hook_suite() {
  return make_suite("bad_node_hook",
                    {a_hook_that_closes_its_output_and_sleeps_ends_at_the_deadline,
                     a_hook_that_prints_without_end_is_cut_at_the_deadline,
                     a_hook_that_leaves_a_child_running_ends_with_its_run,
                     a_shell_hook_and_a_program_run_from_their_descriptors,
                     a_hook_replaced_after_the_check_is_not_what_runs,
                     a_hook_through_a_link_or_an_open_directory_is_refused},
                    30);
}
