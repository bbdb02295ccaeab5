#include "workers/output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {

// The highest rank a rank list may name: bounds the list a range expands to
// ("0-4000000000" must not allocate 16 GB), far above any real world size.
constexpr std::uint64_t kMaxRank = (1u << 20) - 1;

// How long one terminal write may wait for the reader (slurmstepd) to make
// room before the rest of that output is given up: the agent must keep
// reaping workers and forwarding signals even when nobody reads its stdout.
constexpr std::chrono::milliseconds kStallLimit{5000};

std::string errno_text() { return std::strerror(errno); }

// Writes all of `data`, across short writes, EINTR and EAGAIN (a non-blocking
// fd is waited on with poll), but waits at most `max_wait` without progress.
Status write_all(int fd, std::string_view data, std::chrono::milliseconds max_wait) {
  using Clock = std::chrono::steady_clock;
  auto last_progress = Clock::now();
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(std::size_t(n));
      last_progress = Clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - last_progress);
      if (waited >= max_wait) return fail("no room in the output for " + std::to_string(waited.count()) + " ms");
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, int((max_wait - waited).count()));
      continue;
    }
    return fail(n < 0 ? errno_text() : "write() wrote nothing");
  }
  return Ok{};
}

// mkdir -p with permissions 0755 (less the umask) for the directories it creates.
Status make_dirs(const std::string& dir) {
  std::size_t pos = 0;
  do {
    pos = dir.find('/', pos + 1);
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return fail("cannot create the directory " + prefix + ": " + errno_text());
  } while (pos != std::string::npos);
  return Ok{};
}

std::size_t index(Stream stream) { return stream == Stream::Out ? 0 : 1; }

}  // namespace

Result<std::vector<std::uint32_t>> parse_rank_list(std::string_view text) {
  const auto bad = [text](const std::string& why) {
    return fail("'" + std::string(text) + "' is not a rank list: " + why + " (write ranks and ranges like 0,2-4)");
  };
  if (trim(text).empty()) return bad("it names no rank");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // inclusive
  for (const auto piece : split_list(text)) {
    const auto item = trim(piece);
    const auto dash = item.find('-');
    const auto first = parse_uint(trim(item.substr(0, dash)), 0, kMaxRank, "rank");
    const auto last =
        dash == std::string_view::npos ? first : parse_uint(trim(item.substr(dash + 1)), 0, kMaxRank, "rank");
    if (!first || !last)
      return bad("'" + std::string(item) + "' is not a rank or a range of ranks from 0 to " + std::to_string(kMaxRank));
    if (*first > *last) return bad("the range '" + std::string(item) + "' ends below its start");
    ranges.emplace_back(*first, *last);
  }
  // Expanded once, in order: overlapping ranges ("0-9,5-20") give each rank once.
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::uint32_t> ranks;
  for (const auto& [first, last] : ranges)
    for (auto r = ranks.empty() ? first : std::max<std::uint64_t>(first, ranks.back() + 1); r <= last; ++r)
      ranks.push_back(std::uint32_t(r));
  return ranks;
}

// ---------------------------------------------------------------------------
// Fd

OutputRouter::Fd& OutputRouter::Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

int OutputRouter::Fd::release() { return std::exchange(fd_, -1); }

void OutputRouter::Fd::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

// ---------------------------------------------------------------------------
// OutputRouter

OutputRouter::OutputRouter(OutputOptions options) : options_(std::move(options)), logging_(!options_.log_dir.empty()) {}

OutputRouter::~OutputRouter() = default;

OutputRouter::Worker* OutputRouter::find_worker(std::uint32_t local_rank) {
  for (auto& worker : workers_)
    if (worker.local_rank == local_rank) return &worker;
  return nullptr;
}

const OutputRouter::Worker* OutputRouter::find_worker(std::uint32_t local_rank) const {
  return const_cast<OutputRouter*>(this)->find_worker(local_rank);
}

Result<OutputRouter::ChildEnds> OutputRouter::add_worker(std::uint32_t local_rank, std::uint32_t global_rank) {
  if (find_worker(local_rank)) return fail("the output of worker " + std::to_string(local_rank) + " is routed already");
  Worker worker;
  worker.local_rank = local_rank;
  worker.global_rank = global_rank;
  worker.to_terminal = !options_.ranks ||
                       std::find(options_.ranks->begin(), options_.ranks->end(), global_rank) != options_.ranks->end();
  if (options_.prefix) worker.prefix = "[rank " + std::to_string(global_rank) + "] ";

  for (auto& channel : worker.channels) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return fail("cannot create an output pipe for worker " + std::to_string(local_rank) + ": " + errno_text());
    channel.read = Fd(fds[0]);
    channel.child = Fd(fds[1]);
    // Never 0-2 (an agent started with closed std fds): the worker dup2s this
    // end onto 1 and 2, and dup2(fd, fd) would keep O_CLOEXEC, or clobber the
    // other stream's end.
    if (channel.child.get() <= 2) {
      const int moved = ::fcntl(channel.child.get(), F_DUPFD_CLOEXEC, 3);
      if (moved < 0)
        return fail("cannot move an output pipe of worker " + std::to_string(local_rank) + ": " + errno_text());
      channel.child = Fd(moved);
    }
    // Non-blocking on our side only: the worker's writes may block (that is
    // its back-pressure), the agent's reads must not.
    const int flags = ::fcntl(channel.read.get(), F_GETFL);
    if (flags < 0 || ::fcntl(channel.read.get(), F_SETFL, flags | O_NONBLOCK) != 0)
      return fail("cannot make an output pipe of worker " + std::to_string(local_rank) +
                  " non-blocking: " + errno_text());
  }
  open_logs(worker);
  const ChildEnds ends{worker.channels[0].child.get(), worker.channels[1].child.get()};
  workers_.push_back(std::move(worker));
  return ends;
}

void OutputRouter::open_logs(Worker& worker) {
  if (!logging_) return;
  if (auto made = make_dirs(options_.log_dir); !made) {
    warn(made.error() + "; worker output goes to the terminal only", log_warned_);
    stop_logging();
    return;
  }
  const std::string base = options_.log_dir + "/rank-" + std::to_string(worker.global_rank);
  for (const Stream stream : {Stream::Out, Stream::Err}) {
    const std::string path = base + (stream == Stream::Out ? ".out" : ".err");
    // O_APPEND: a restart (or a rerun) adds to the file instead of replacing it.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd < 0) {
      warn("cannot open the log file " + path + ": " + errno_text() + "; worker output goes to the terminal only",
           log_warned_);
      for (auto& channel : worker.channels) channel.log.close();
      stop_logging();
      return;
    }
    worker.channels[index(stream)].log = Fd(fd);
  }
}

// After a log problem no worker logs any more: a set of log files with holes
// in it would look complete.
void OutputRouter::stop_logging() {
  logging_ = false;
  for (auto& worker : workers_)
    for (auto& channel : worker.channels) channel.log.close();
}

void OutputRouter::close_child_ends(std::uint32_t local_rank) {
  if (Worker* worker = find_worker(local_rank))
    for (auto& channel : worker->channels) channel.child.close();
}

std::vector<int> OutputRouter::read_fds() const {
  std::vector<int> fds;
  for (const auto& worker : workers_)
    for (const auto& channel : worker.channels)
      if (channel.read) fds.push_back(channel.read.get());
  return fds;
}

bool OutputRouter::on_readable(int fd) {
  if (fd < 0) return false;
  for (auto& worker : workers_)
    for (const Stream stream : {Stream::Out, Stream::Err})
      if (worker.channels[index(stream)].read.get() == fd) return read_channel(worker, stream);
  return false;
}

bool OutputRouter::read_channel(Worker& worker, Stream stream) {
  Channel& channel = worker.channels[index(stream)];
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(channel.read.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    Batch batch;
    if (n > 0) {
      take_lines(worker, stream, std::string_view(buffer, std::size_t(n)), batch);
      deliver(worker, stream, batch);
      continue;
    }
    // EOF, or an error that reading again would repeat.
    flush_partial(worker, stream, batch);
    deliver(worker, stream, batch);
    channel.read.close();
    return false;
  }
}

void OutputRouter::drain() {
  // Our copies of the child ends would keep every pipe from reaching EOF.
  for (auto& worker : workers_)
    for (auto& channel : worker.channels) channel.child.close();
  for (auto& worker : workers_)
    for (const Stream stream : {Stream::Out, Stream::Err}) {
      if (!worker.channels[index(stream)].read) continue;
      if (!read_channel(worker, stream)) continue;
      // Still open: something the worker started holds the pipe. Its last
      // line is due now, not when that process ends.
      Batch batch;
      flush_partial(worker, stream, batch);
      deliver(worker, stream, batch);
    }
}

void OutputRouter::take_lines(Worker& worker, Stream stream, std::string_view data, Batch& batch) {
  std::string& partial = worker.channels[index(stream)].partial;
  while (!data.empty()) {
    const auto newline = data.find('\n');
    const bool complete = newline != std::string_view::npos;
    std::string_view rest = data.substr(0, complete ? newline : data.size());
    data.remove_prefix(complete ? newline + 1 : data.size());
    // A piece is cut only once the line is known to be longer than the limit,
    // so a line of exactly kMaxLineBytes stays one line. partial never holds
    // more than kMaxLineBytes.
    while (partial.size() + rest.size() > kMaxLineBytes) {
      const std::size_t take = kMaxLineBytes - partial.size();
      partial.append(rest.substr(0, take));
      emit(worker, stream, partial, batch);
      partial.clear();
      rest.remove_prefix(take);
    }
    if (!complete) {
      partial.append(rest);
      break;
    }
    if (partial.empty()) {
      emit(worker, stream, rest, batch);  // the usual case: no copy
    } else {
      partial.append(rest);
      emit(worker, stream, partial, batch);
      partial.clear();
    }
  }
}

void OutputRouter::flush_partial(Worker& worker, Stream stream, Batch& batch) {
  std::string& partial = worker.channels[index(stream)].partial;
  if (partial.empty()) return;
  emit(worker, stream, partial, batch);
  partial.clear();
}

void OutputRouter::emit(Worker& worker, Stream stream, std::string_view line, Batch& batch) {
  if (worker.to_terminal) {
    batch.terminal.append(worker.prefix).append(line).push_back('\n');
  }
  if (worker.channels[index(stream)].log) batch.log.append(line).push_back('\n');
  if (stream == Stream::Err && options_.tail_lines > 0) {
    if (worker.tail.size() >= options_.tail_lines) worker.tail.pop_front();
    worker.tail.emplace_back(line);
  }
}

void OutputRouter::deliver(Worker& worker, Stream stream, const Batch& batch) {
  if (!batch.terminal.empty()) {
    const int fd = stream == Stream::Out ? options_.out_fd : options_.err_fd;
    const auto wait = terminal_stalled_ ? std::chrono::milliseconds(0) : kStallLimit;
    if (auto written = write_all(fd, batch.terminal, wait); !written) {
      terminal_stalled_ = true;
      warn("worker output to the agent's " + std::string(stream == Stream::Out ? "stdout" : "stderr") +
               " was lost: " + written.error(),
           terminal_warned_);
    } else {
      terminal_stalled_ = false;
    }
  }
  const Fd& log = worker.channels[index(stream)].log;
  if (!batch.log.empty() && log) {
    if (auto written = write_all(log.get(), batch.log, kStallLimit); !written) {
      warn("cannot write the log files in " + options_.log_dir + ": " + written.error() +
               "; worker output goes to the terminal only",
           log_warned_);
      stop_logging();
    }
  }
}

std::vector<std::string> OutputRouter::stderr_tail(std::uint32_t local_rank) const {
  const Worker* worker = find_worker(local_rank);
  if (!worker) return {};
  return {worker->tail.begin(), worker->tail.end()};
}

void OutputRouter::reset() { workers_.clear(); }

void OutputRouter::warn(std::string message, bool& once) {
  if (once) return;
  once = true;
  warning_ = warning_ ? *warning_ + "; " + message : std::move(message);
}

std::optional<std::string> OutputRouter::take_warning() { return std::exchange(warning_, std::nullopt); }

}  // namespace ddp::agent
