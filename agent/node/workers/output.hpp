// OutputRouter: the workers' stdout and stderr, as the agent passes them on.
//
// Each worker writes into two pipes the agent reads without blocking (from its
// epoll loop). The router cuts what arrives into lines per (worker, stream) and
//   - writes each line to the agent's own stdout or stderr (the stream it came
//     from), "[rank R] "-prefixed, for the ranks the user asked to see;
//   - keeps the last lines of each worker's stderr for the root-cause report;
//   - appends every line, unfiltered, to DIR/rank-R.out / DIR/rank-R.err.
// Lines are whole on the terminal: several workers share one stdout, and
// torchrun-style interleaving of half lines is unreadable. Writing is the
// sinks' (sink.hpp): the agent's loop never waits for a reader, and a reader
// that pauses holds the workers instead of losing their lines.
#pragma once

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"
#include "node/workers/sink.hpp"

namespace ddp::agent {

struct OutputOptions {
  bool prefix = true;                               // "[rank R] "
  std::optional<std::vector<std::uint32_t>> ranks;  // only these ranks reach the terminal; nullopt = all
  std::string log_dir;                              // "" = no log files
  std::size_t tail_lines = 20;
  int out_fd = 1, err_fd = 2;  // where terminal output goes (tests use pipes)
  // The sink of err_fd when the agent's own messages go there too (its
  // logger's), so that both keep their order; none: the router makes one.
  std::shared_ptr<Sink> err_sink;
};

// "0,2-4" -> {0,2,3,4} (sorted, without duplicates); an error naming the text
// for anything else. For --output-ranks / SDDP_OUTPUT_RANKS.
Result<std::vector<std::uint32_t>> parse_rank_list(std::string_view text);

// The longest line passed on whole; longer ones are cut into pieces this long,
// so one worker printing without newlines cannot grow the agent's memory.
inline constexpr std::size_t kMaxLineBytes = 8192;

enum class Stream { Out, Err };

class OutputRouter {
 public:
  explicit OutputRouter(OutputOptions options);
  OutputRouter(const OutputRouter&) = delete;
  OutputRouter& operator=(const OutputRouter&) = delete;
  ~OutputRouter();  // closes every pipe and log file

  // For one worker: creates the two pipes and returns their write ends for the
  // child to dup2 onto 1 and 2. Every end is O_CLOEXEC (dup2 clears the flag on
  // the copies at 1 and 2), so no worker holds a sibling's pipe open; the read
  // ends are also O_NONBLOCK. Opens the worker's log files when there is a log
  // dir; a problem with them becomes a warning (take_warning), not an error.
  // Call before fork; after fork the parent calls close_child_ends(local) so
  // EOF is seen when the worker exits.
  struct ChildEnds {
    int out;
    int err;
  };
  Result<ChildEnds> add_worker(std::uint32_t local_rank, std::uint32_t global_rank);
  void close_child_ends(std::uint32_t local_rank);

  // The open read ends, for epoll.
  std::vector<int> read_fds() const;

  // Reads what is available on fd (until EAGAIN, or until the output is
  // held) and routes the complete lines. Returns false when that fd reached
  // EOF (or a read error, or is not one of ours): it is then closed, which
  // also takes it out of an epoll set, and no longer in read_fds().
  bool on_readable(int fd);

  // Closes the child ends still open, reads what every fd holds now (to its
  // EOF, when its worker has ended) and flushes partial lines: call after the
  // workers are reaped, or for a failed worker's last lines. A pipe that a
  // worker's background process still holds stays open (and in read_fds()).
  void drain();

  // Back-pressure (sink.hpp): the output's sinks are full, so the workers'
  // pipes are not to be read (the agent takes them out of its loop) until
  // one of drained_fds() becomes readable and held() is false again.
  bool held() const;
  std::vector<int> drained_fds() const;
  void clear_drained() const;
  // Everything passed on has been written.
  bool written() const;
  // Waits until it is, or `patience` passed without progress; true when written.
  bool flush(std::chrono::milliseconds patience);
  // From the loop: what to tell the user about the output, once each: that a
  // reader holds it (it has taken nothing for 2 s), that a reader went away,
  // that the log files cannot be written.
  std::vector<std::string> tick();

  // The last lines of a worker's stderr, oldest first.
  std::vector<std::string> stderr_tail(std::uint32_t local_rank) const;

  // Forget all workers (a new attempt): closes everything; log files stay
  // appended to (they are reopened with O_APPEND by the next add_worker).
  void reset();

  // A log-file problem, or terminal output given up on, each reported once
  // (empty when none, or when already taken).
  std::optional<std::string> take_warning();

 private:
  // An owned file descriptor.
  class Fd {
   public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(other.release()) {}
    Fd& operator=(Fd&& other) noexcept;
    ~Fd() { close(); }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    int release();
    void close();

   private:
    int fd_ = -1;
  };

  // One stream of one worker.
  struct Channel {
    Fd read;              // ours
    Fd child;             // the worker's end, until close_child_ends
    int log = -1;         // DIR/rank-R.out or .err, when logging; logs_ writes and closes it
    std::string partial;  // bytes after the last newline
  };

  struct Worker {
    std::uint32_t local_rank = 0;
    std::uint32_t global_rank = 0;
    bool to_terminal = true;       // passes the rank filter
    std::string prefix;            // "[rank R] " or ""
    Channel channels[2];           // indexed by Stream
    std::deque<std::string> tail;  // of stderr
  };

  // Lines cut from one read, gathered so each destination gets one write.
  struct Batch {
    std::string terminal;
    std::string log;
  };

  Worker* find_worker(std::uint32_t local_rank);
  const Worker* find_worker(std::uint32_t local_rank) const;
  void open_logs(Worker& worker);
  void close_logs(Worker& worker);
  bool read_channel(Worker& worker, Stream stream, std::size_t budget, bool heed_hold);
  void take_lines(Worker& worker, Stream stream, std::string_view data, Batch& batch);
  void flush_partial(Worker& worker, Stream stream, Batch& batch);
  void emit(Worker& worker, Stream stream, std::string_view line, Batch& batch);
  void deliver(Worker& worker, Stream stream, Batch& batch);
  void warn(std::string message, bool& once);
  void stop_logging();

  OutputOptions options_;
  std::shared_ptr<Sink> out_, err_, logs_;  // the agent's stdout, its stderr, the log files
  std::deque<Worker> workers_;  // deque: Worker addresses stay valid as workers are added
  bool logging_ = false;        // a log dir, and no log problem so far
  bool log_warned_ = false;
  bool told_held_ = false;
  std::optional<std::string> warning_;
};

}  // namespace ddp::agent
