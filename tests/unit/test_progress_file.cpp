// The progress file between ddp-train (or any worker) and the agent's hang
// watch: what the agent creates, what ProgressWriter writes and what
// read_progress makes of it, round trip. (read_progress on hand-written
// files is in test_agent.cpp.)
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ddp/wire/progress_file.hpp"
// Last: check.h defines a macro `fail`, which ddp/base/result.hpp declares as a function.
#include "suites.hpp"

using namespace ddp;
namespace fs = std::filesystem;
using std::chrono::system_clock;

namespace {

std::string progress_scratch() {
  char tmpl[] = "/tmp/ddp-progress-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(dir);
  return dir;
}

// `t` within a minute of now: the file's time comes from the file system's
// clock, which may run a few ms behind system_clock.
bool recent(system_clock::time_point t) {
  const auto now = system_clock::now();
  return t > now - std::chrono::minutes(1) && t <= now + std::chrono::minutes(1);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

START_TEST(a_created_file_reads_as_never_touched) {
  const auto dir = progress_scratch();
  const auto path = dir + "/progress";
  ck_assert(create_progress_file(path).ok());
  const auto fresh = read_progress(path);
  ck_assert(fresh && fresh->last == system_clock::time_point{} && !fresh->step);
  fs::remove_all(dir);
}
END_TEST

START_TEST(a_mark_reads_back_as_its_step_and_a_recent_time) {
  const auto dir = progress_scratch();
  const auto path = dir + "/progress";
  ck_assert(create_progress_file(path).ok());
  const ProgressWriter writer(path);
  writer.mark(42);
  const auto marked = read_progress(path);
  ck_assert(marked && marked->step && recent(marked->last));
  ck_assert_uint_eq(*marked->step, 42);
  // Fixed width: a shorter number replaces a longer one whole.
  writer.mark(123456789012);
  writer.mark(7);
  ck_assert_uint_eq(*read_progress(path)->step, 7);
  ck_assert_uint_eq(fs::file_size(path), 21);
  fs::remove_all(dir);
}
END_TEST

// Each attempt and rank gets a new file, in the agent's private directory;
// a name that exists is refused, whatever it is, and left as it was: a file,
// a link another user planted (to a file of the job's user), a FIFO (which
// would hang an open() that waits for a reader).
START_TEST(an_existing_name_is_refused_and_left_alone) {
  const auto dir = progress_scratch();
  { std::ofstream(dir + "/target") << "the user's data\n"; }
  { std::ofstream(dir + "/file") << "an earlier file\n"; }
  fs::create_symlink(dir + "/target", dir + "/link");
  ck_assert_int_eq(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  for (const char* name : {"file", "link", "fifo"}) {
    const auto made = create_progress_file(dir + "/" + name);
    ck_assert_msg(!made.ok(), "%s was accepted", name);
    CK_CONTAINS(made.error(), dir + "/" + name);
  }
  CK_STR_EQ(slurp(dir + "/target"), "the user's data\n");
  CK_STR_EQ(slurp(dir + "/file"), "an earlier file\n");
  fs::remove_all(dir);
}
END_TEST

// ddp-train without the agent's watch (no DDP_PROGRESS_FILE), or with a file
// that is gone: marks are no-ops and create nothing.
START_TEST(a_writer_without_a_file_marks_nothing) {
  const auto dir = progress_scratch();
  ProgressWriter("").mark(1);
  ProgressWriter(dir + "/absent").mark(1);
  ck_assert(!fs::exists(dir + "/absent"));
  ck_assert(!read_progress(dir + "/absent"));
  fs::remove_all(dir);
}
END_TEST

START_TEST(a_file_that_cannot_be_made_is_an_error_naming_it) {
  const auto made = create_progress_file("/nonexistent-ddp-dir/progress");
  ck_assert(!made.ok());
  CK_CONTAINS(made.error(), "/nonexistent-ddp-dir/progress");
}
END_TEST

Suite* progress_file_suite() {
  return make_suite("progress_file",
                    {a_created_file_reads_as_never_touched, a_mark_reads_back_as_its_step_and_a_recent_time,
                     an_existing_name_is_refused_and_left_alone, a_writer_without_a_file_marks_nothing,
                     a_file_that_cannot_be_made_is_an_error_naming_it});
}
