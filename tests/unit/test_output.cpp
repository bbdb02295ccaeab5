// The worker output router with real pipes: the test writes into the ends a
// worker would get and reads back what the router passed to the "terminal"
// (two more pipes standing in for the agent's stdout and stderr).
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "node/workers/output.hpp"
#include "node/workers/sink.hpp"
#include "suites.hpp"

using namespace ddp;
using agent::OutputOptions;
using agent::OutputRouter;
using agent::Sink;
namespace fs = std::filesystem;

namespace {

// A pipe whose read end never blocks, so the test can read "what is there".
struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
    read = fds[0];
    write = fds[1];
    ck_assert_int_eq(fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK), 0);
  }
  ~Pipe() {
    close(read);
    close(write);
  }
  std::string take() const {
    std::string text;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(read, buffer, sizeof buffer)) > 0) text.append(buffer, std::size_t(n));
    return text;
  }
};

// The agent's stdout and stderr.
struct Terminal {
  Pipe out, err;
  OutputOptions options() const {
    OutputOptions o;
    o.out_fd = out.write;
    o.err_fd = err.write;
    return o;
  }
};

void put(int fd, const std::string& text) {
  ck_assert_int_eq(write(fd, text.data(), text.size()), ssize_t(text.size()));
}

agent::OutputRouter::ChildEnds add(OutputRouter& router, std::uint32_t local, std::uint32_t global) {
  auto ends = router.add_worker(local, global);
  ck_assert_msg(ends.ok(), "%s", ends.ok() ? "" : ends.error().c_str());
  return *ends;
}

// What the router has written to `pipe` so far, once its sinks are done.
std::string written(OutputRouter& router, const Pipe& pipe) {
  ck_assert(router.flush(std::chrono::seconds(2)));
  return pipe.take();
}

std::string scratch() {
  char tmpl[] = "/tmp/ddp-output-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "8192x 100x 8192y" for runs of one character per line: 8 KiB lines make
// unreadable (and, for Check, too long) failure messages.
std::string shape(const std::string& text) {
  std::string summary;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const bool uniform = !line.empty() && line.find_first_not_of(line[0]) == std::string::npos;
    summary += uniform ? std::to_string(line.size()) + line[0] + " " : "'" + line + "' ";
  }
  if (!text.empty() && text.back() != '\n') summary += "(no final newline)";
  return summary;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "|";
  return text;
}

}  // namespace

START_TEST(parse_rank_list_reads_ranks_and_ranges) {
  const auto ranks = agent::parse_rank_list("0,2-4");
  ck_assert(ranks.ok());
  ck_assert(*ranks == (std::vector<std::uint32_t>{0, 2, 3, 4}));
  const auto messy = agent::parse_rank_list(" 5 , 1-2,2,  7-7 ,1");  // blanks, overlaps, out of order
  ck_assert(messy.ok());
  ck_assert(*messy == (std::vector<std::uint32_t>{1, 2, 5, 7}));
  const auto one = agent::parse_rank_list("12");
  ck_assert(one.ok());
  ck_assert(*one == (std::vector<std::uint32_t>{12}));
}
END_TEST

START_TEST(parse_rank_list_rejects_garbage_naming_it) {
  for (const char* bad : {"", " ", "x", "0,x", "1,", ",1", "4-2", "-1", "1-2-3", "1-", "+1", "0x3", "99999999999"}) {
    const auto ranks = agent::parse_rank_list(bad);
    ck_assert_msg(!ranks.ok(), "'%s' was accepted", bad);
    CK_CONTAINS(ranks.error(), "'" + std::string(bad) + "'");
  }
  CK_CONTAINS(agent::parse_rank_list("4-2").error(), "ends below its start");
}
END_TEST

START_TEST(lines_are_assembled_across_writes_and_flushed_at_eof) {
  Terminal term;
  OutputRouter router(term.options());
  const auto ends = add(router, 0, 5);
  const auto fds = router.read_fds();
  ck_assert_uint_eq(fds.size(), 2);
  const int out_fd = fds[0];

  put(ends.out, "one\ntwo\nthr");  // several lines in one write, the last one unfinished
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(written(router, term.out), "[rank 5] one\n[rank 5] two\n");
  put(ends.out, "ee\n\nfo");
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(written(router, term.out), "[rank 5] three\n[rank 5] \n");  // an empty line stays a line
  put(ends.out, "ur");
  router.close_child_ends(0);  // the worker exits: EOF on both pipes
  ck_assert(!router.on_readable(out_fd));
  CK_STR_EQ(written(router, term.out), "[rank 5] four\n");
  ck_assert_uint_eq(router.read_fds().size(), 1);  // only stderr is still open
  ck_assert(!router.on_readable(out_fd));          // no longer ours
  CK_STR_EQ(written(router, term.err), "");                  // nothing went to the wrong stream
}
END_TEST

START_TEST(stderr_goes_to_the_agents_stderr) {
  Terminal term;
  OutputRouter router(term.options());
  const auto ends = add(router, 1, 3);
  put(ends.err, "oops\n");
  put(ends.out, "fine\n");
  router.close_child_ends(1);
  router.drain();
  CK_STR_EQ(written(router, term.err), "[rank 3] oops\n");
  CK_STR_EQ(written(router, term.out), "[rank 3] fine\n");
  ck_assert(router.read_fds().empty());
}
END_TEST

START_TEST(over_long_lines_are_cut_into_8k_pieces) {
  Terminal term;
  auto options = term.options();
  options.prefix = false;
  OutputRouter router(options);
  const auto ends = add(router, 0, 0);
  const int out_fd = router.read_fds()[0];
  const std::size_t k = agent::kMaxLineBytes;
  ck_assert_uint_eq(k, 8192);

  put(ends.out, std::string(2 * k + 100, 'x') + "\n" + std::string(k, 'y') + "\n");
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(shape(written(router, term.out)), "8192x 8192x 100x 8192y ");
  // Exactly 8 KiB, its newline in the next write: one line, no empty piece.
  put(ends.out, std::string(k, 'z'));
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(shape(written(router, term.out)), "");
  put(ends.out, "\n");
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(shape(written(router, term.out)), "8192z ");
  // Without any newline: pieces as the bytes come, the rest at EOF.
  put(ends.out, std::string(k + 1, 'w'));
  ck_assert(router.on_readable(out_fd));
  CK_STR_EQ(shape(written(router, term.out)), "8192w ");
  router.drain();
  CK_STR_EQ(shape(written(router, term.out)), "1w ");
}
END_TEST

START_TEST(prefix_can_be_turned_off) {
  Terminal term;
  auto options = term.options();
  options.prefix = false;
  OutputRouter router(options);
  const auto ends = add(router, 0, 7);
  put(ends.out, "plain\n");
  put(ends.err, "bare\n");
  router.drain();
  CK_STR_EQ(written(router, term.out), "plain\n");
  CK_STR_EQ(written(router, term.err), "bare\n");
}
END_TEST

START_TEST(rank_filter_keeps_other_ranks_off_the_terminal_only) {
  Terminal term;
  const auto dir = scratch();
  auto options = term.options();
  options.ranks = std::vector<std::uint32_t>{1};
  options.log_dir = dir;
  OutputRouter router(options);
  const auto hidden = add(router, 0, 0);
  const auto shown = add(router, 1, 1);
  put(hidden.out, "hidden out\n");
  put(hidden.err, "hidden err\n");
  put(shown.out, "shown out\n");
  put(shown.err, "shown err\n");
  router.drain();
  CK_STR_EQ(written(router, term.out), "[rank 1] shown out\n");
  CK_STR_EQ(written(router, term.err), "[rank 1] shown err\n");
  CK_STR_EQ(slurp(fs::path(dir) / "rank-0.out"), "hidden out\n");
  CK_STR_EQ(slurp(fs::path(dir) / "rank-0.err"), "hidden err\n");
  CK_STR_EQ(joined(router.stderr_tail(0)), "hidden err|");
  ck_assert(!router.take_warning());
  fs::remove_all(dir);
}
END_TEST

START_TEST(stderr_tail_keeps_the_last_lines_in_order) {
  Terminal term;
  auto options = term.options();
  options.tail_lines = 3;
  OutputRouter router(options);
  const auto ends = add(router, 2, 2);
  const auto other = add(router, 4, 9);
  put(ends.err, "e1\ne2\ne3\n");
  put(ends.out, "o1\no2\no3\no4\n");  // stdout never enters the tail
  put(other.err, "x1\n");             // nor does another worker's stderr
  ck_assert(router.on_readable(router.read_fds()[1]));
  ck_assert(router.on_readable(router.read_fds()[0]));
  CK_STR_EQ(joined(router.stderr_tail(2)), "e1|e2|e3|");
  put(ends.err, "e4\ne5");  // e5 is partial until EOF
  router.drain();
  CK_STR_EQ(joined(router.stderr_tail(2)), "e3|e4|e5|");
  CK_STR_EQ(joined(router.stderr_tail(4)), "x1|");
  ck_assert(router.stderr_tail(3).empty());  // no such worker
  router.reset();
  ck_assert(router.stderr_tail(2).empty());
}
END_TEST

START_TEST(log_files_get_every_line_and_are_appended_across_reset) {
  Terminal term;
  const auto dir = scratch();
  const auto logs = fs::path(dir) / "logs" / "job";  // neither exists yet
  umask(022);
  auto options = term.options();
  options.log_dir = logs.string();
  options.prefix = true;  // the prefix is for the terminal, not the files
  OutputRouter router(options);

  auto ends = add(router, 0, 3);
  put(ends.out, "first out\nno newline");
  put(ends.err, "first err\n");
  router.drain();
  router.reset();
  ck_assert(router.read_fds().empty());
  ends = add(router, 0, 3);  // the next attempt: same rank, same files
  put(ends.out, "second out\n");
  router.drain();

  ck_assert(router.flush(std::chrono::seconds(2)));
  CK_STR_EQ(slurp(logs / "rank-3.out"), "first out\nno newline\nsecond out\n");
  CK_STR_EQ(slurp(logs / "rank-3.err"), "first err\n");
  CK_STR_EQ(written(router, term.out), "[rank 3] first out\n[rank 3] no newline\n[rank 3] second out\n");
  struct stat st {};
  ck_assert_int_eq(stat(logs.c_str(), &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0755);
  ck_assert_int_eq(stat((logs / "rank-3.err").c_str(), &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  ck_assert(!router.take_warning());
  fs::remove_all(dir);
}
END_TEST

START_TEST(an_unusable_log_dir_warns_once_and_the_terminal_still_works) {
  Terminal term;
  const auto dir = scratch();
  { std::ofstream(fs::path(dir) / "file") << "not a directory\n"; }
  auto options = term.options();
  options.log_dir = (fs::path(dir) / "file" / "logs").string();  // fails for root too
  OutputRouter router(options);
  const auto a = add(router, 0, 0);
  const auto b = add(router, 1, 1);
  const auto warning = router.take_warning();
  ck_assert(warning.has_value());
  CK_CONTAINS(*warning, options.log_dir);
  CK_CONTAINS(*warning, "terminal only");
  put(a.out, "still here\n");
  put(b.err, "me too\n");
  router.drain();
  CK_STR_EQ(written(router, term.out), "[rank 0] still here\n");
  CK_STR_EQ(written(router, term.err), "[rank 1] me too\n");
  router.reset();
  add(router, 0, 0);
  ck_assert(!router.take_warning());  // once, not per worker or attempt
  fs::remove_all(dir);
}
END_TEST

START_TEST(drain_closes_forgotten_child_ends_and_flushes) {
  Terminal term;
  OutputRouter router(term.options());
  const auto ends = add(router, 0, 0);
  put(ends.out, "unfinished");
  router.drain();  // close_child_ends was never called: drain must not wait for EOF forever
  CK_STR_EQ(written(router, term.out), "[rank 0] unfinished\n");
  ck_assert(router.read_fds().empty());
}
END_TEST

START_TEST(a_worker_is_added_once_and_its_ends_are_cloexec) {
  Terminal term;
  OutputRouter router(term.options());
  const auto ends = add(router, 0, 0);
  ck_assert_int_gt(ends.out, 2);
  ck_assert_int_gt(ends.err, 2);
  ck_assert(fcntl(ends.out, F_GETFD) & FD_CLOEXEC);
  ck_assert(!(fcntl(ends.out, F_GETFL) & O_NONBLOCK));  // the worker's writes block
  for (int fd : router.read_fds()) {
    ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
  }
  const auto again = router.add_worker(0, 1);
  ck_assert(!again.ok());
  CK_CONTAINS(again.error(), "worker 0");
  ck_assert(!router.on_readable(-1));
}
END_TEST

START_TEST(a_full_terminal_pipe_loses_nothing) {
  // The agent's stdout as slurmstepd might leave it: a small non-blocking pipe,
  // read slowly. Every write is short or EAGAIN; no byte may go missing.
  Terminal term;
  ck_assert_int_ge(fcntl(term.out.write, F_SETPIPE_SZ, 4096), 4096);
  ck_assert_int_eq(fcntl(term.out.write, F_SETFL, fcntl(term.out.write, F_GETFL) | O_NONBLOCK), 0);
  OutputRouter router(term.options());
  const auto ends = add(router, 0, 0);
  std::string expected, sent;
  for (int i = 0; i < 1000; ++i) {
    sent += "line " + std::to_string(i) + "\n";
    expected += "[rank 0] line " + std::to_string(i) + "\n";
  }
  put(ends.out, sent);  // ~10 KB: fits the worker's pipe, not the terminal's
  std::string received;
  std::thread reader([&] {
    while (received.size() < expected.size()) {
      received += term.out.take();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  router.drain();  // never waits for the terminal: the sink does
  reader.join();
  CK_STR_EQ(received, expected);
  ck_assert(router.written());
  ck_assert(!router.take_warning());
}
END_TEST

// A reader that pauses: the sink takes the writes without blocking, says it
// is full past its high-water mark, and once the reader reads again it
// drains (its eventfd says so) and nothing was lost.
START_TEST(a_sink_never_blocks_and_loses_nothing) {
  Pipe reader;  // nobody reads it for now
  agent::Sink sink;
  std::string sent;
  for (int i = 0; i < 40000; ++i) sent += "a line of the paused output " + std::to_string(i) + "\n";
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t pos = 0; pos < sent.size(); pos += 65536) sink.write(reader.write, sent.substr(pos, 65536));
  ck_assert(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));  // queued, not written
  ck_assert(sink.full());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ck_assert_int_ge(sink.waiting().count(), 250);
  ck_assert(!sink.flush(std::chrono::milliseconds(100)));
  std::string received;
  pollfd drained{sink.drained_fd(), POLLIN, 0};
  bool said_drained = false;
  for (int i = 0; i < 5000 && received.size() < sent.size(); ++i) {
    received += reader.take();
    said_drained |= ::poll(&drained, 1, 0) == 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ck_assert(sink.flush(std::chrono::seconds(2)));
  ck_assert(received == sent);
  ck_assert(said_drained);
  ck_assert(!sink.full() && sink.waiting().count() == 0);
  ck_assert(!sink.take_error());
}
END_TEST

// A reader that goes away: the sink says so once and discards what comes,
// without blocking and without SIGPIPE.
START_TEST(a_reader_gone_away_is_said_and_its_output_discarded) {
  int fds[2];
  ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
  ::close(fds[0]);
  agent::Sink sink;
  sink.write(fds[1], "to nobody\n");
  ck_assert(sink.flush(std::chrono::seconds(2)));
  const auto error = sink.take_error();
  ck_assert(error.has_value());
  CK_CONTAINS(*error, "Broken pipe");
  sink.write(fds[1], std::string(4 << 20, 'x'));
  ck_assert(sink.flush(std::chrono::seconds(2)) && !sink.full());
  ck_assert(!sink.take_error());  // said once
  ::close(fds[1]);
}
END_TEST

// The router under a paused terminal: it stops reading once the sinks are
// full (held), the worker then blocks on its own pipe, and when the reader
// is back every line arrives, in order.
START_TEST(a_paused_terminal_holds_the_worker_and_loses_nothing) {
  Terminal term;
  OutputRouter router(term.options());
  const auto ends = add(router, 0, 7);
  const int fd = router.read_fds()[0];
  constexpr int kLines = 200000;
  std::atomic<bool> done{false}, short_write{false};
  std::thread worker([&] {
    std::string chunk;
    for (int i = 0; i < kLines; ++i) {
      chunk += "line " + std::to_string(i) + "\n";
      if (chunk.size() > 8192 || i + 1 == kLines) {
        // Blocks when held; a short write would lose lines.
        if (::write(ends.out, chunk.data(), chunk.size()) != ssize_t(chunk.size())) short_write = true;
        chunk.clear();
      }
    }
    done = true;
  });
  for (int i = 0; i < 2000 && !router.held(); ++i) {
    router.on_readable(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ck_assert(router.held());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ck_assert(!done);  // the worker waits on its own write, as under torchrun
  // Read until every byte is here: "done" and empty sinks alone do not say
  // the router has read the worker's pipe to its end, and what it reads after
  // this loop has nobody taking it from the terminal pipe.
  std::size_t expected_bytes = 0;
  for (int i = 0; i < kLines; ++i) expected_bytes += ("[rank 7] line " + std::to_string(i) + "\n").size();
  std::string received;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (received.size() < expected_bytes && std::chrono::steady_clock::now() < deadline) {
    received += term.out.take();
    if (!router.held()) router.on_readable(fd);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  worker.join();
  ck_assert(!short_write);
  router.close_child_ends(0);
  router.drain();
  ck_assert(router.flush(std::chrono::seconds(2)));
  received += term.out.take();
  std::istringstream lines(received);
  int expected = 0;
  for (std::string line; std::getline(lines, line); ++expected)
    ck_assert_msg(line == "[rank 7] line " + std::to_string(expected), "line %d: '%s'", expected, line.c_str());
  ck_assert_int_eq(expected, kLines);
}
END_TEST

// The log files get the same treatment: a log file that takes nothing (here
// a FIFO nobody reads yet, as an NFS server that stalls) holds the workers
// too, and loses nothing once it takes again.
START_TEST(a_stalled_log_file_holds_the_worker_too) {
  Terminal term;
  const auto dir = scratch();
  ck_assert_int_eq(mkfifo((fs::path(dir) / "rank-0.out").c_str(), 0600), 0);
  const int fifo = ::open((fs::path(dir) / "rank-0.out").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ck_assert_int_ge(fifo, 0);
  auto options = term.options();
  options.log_dir = dir;
  options.ranks = std::vector<std::uint32_t>{};  // nothing to the terminal: the log file alone
  OutputRouter router(options);
  const auto ends = add(router, 0, 0);
  const int fd = router.read_fds()[0];
  const std::string line(999, 'l');
  for (int i = 0; i < 2000 && !router.held(); ++i) {
    put(ends.out, line + "\n");
    router.on_readable(fd);
  }
  ck_assert(router.held());
  std::size_t received = 0;
  char buffer[65536];
  for (int i = 0; i < 20000 && !router.written(); ++i) {
    const ssize_t n = ::read(fifo, buffer, sizeof buffer);
    if (n > 0) received += std::size_t(n);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ck_assert(router.written() && !router.held());
  // What the FIFO still holds (up to its 64 KiB) was written too: read it
  // before counting (counting without it passes or not by the last poll's luck).
  for (ssize_t n; (n = ::read(fifo, buffer, sizeof buffer)) > 0;) received += std::size_t(n);
  ck_assert_uint_gt(received, Sink::kHighWater);
  ck_assert_uint_eq(received % 1000, 0);  // whole lines
  ::close(fifo);
  fs::remove_all(dir);
}
END_TEST

Suite* output_suite() {
  return make_suite(
      "output",
      {parse_rank_list_reads_ranks_and_ranges, parse_rank_list_rejects_garbage_naming_it,
       lines_are_assembled_across_writes_and_flushed_at_eof, stderr_goes_to_the_agents_stderr,
       over_long_lines_are_cut_into_8k_pieces, prefix_can_be_turned_off,
       rank_filter_keeps_other_ranks_off_the_terminal_only, stderr_tail_keeps_the_last_lines_in_order,
       log_files_get_every_line_and_are_appended_across_reset,
       an_unusable_log_dir_warns_once_and_the_terminal_still_works, drain_closes_forgotten_child_ends_and_flushes,
       a_worker_is_added_once_and_its_ends_are_cloexec, a_full_terminal_pipe_loses_nothing,
       a_sink_never_blocks_and_loses_nothing, a_reader_gone_away_is_said_and_its_output_discarded,
       a_paused_terminal_holds_the_worker_and_loses_nothing, a_stalled_log_file_holds_the_worker_too},
      30);
}
