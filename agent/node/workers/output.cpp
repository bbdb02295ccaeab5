#include "node/workers/output.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <utility>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {

// The highest rank a rank list may name: bounds the list a range expands to
// ("0-4000000000" must not allocate 16 GB), far above any real world size.
constexpr std::uint64_t kMaxRank = (1u << 20) - 1;

// How long a reader may take nothing, with output waiting for it, before
// the user is told that the output is held.
constexpr std::chrono::milliseconds kHeldNotice{2000};


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

OutputRouter::OutputRouter(OutputOptions options)
    : options_(std::move(options)),
      out_(std::make_shared<Sink>()),
      err_(options_.err_sink ? options_.err_sink : std::make_shared<Sink>()),
      logs_(std::make_shared<Sink>()),
      logging_(!options_.log_dir.empty()) {}

OutputRouter::~OutputRouter() {
  for (auto& worker : workers_) close_logs(worker);
}

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

namespace {

// Why an open log file is not the job user's own, or "".
std::string not_ours(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return errno_text();
  if (st.st_uid != ::geteuid()) return "it belongs to uid " + std::to_string(st.st_uid) + ", another user";
  return "";
}

}  // namespace

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
    // O_NONBLOCK: a FIFO nobody reads must not hang the agent in open(); its
    // writes wait in the log sink instead. O_NOFOLLOW and the owner: in a
    // shared folder another user may have made the name first, as a link to
    // a file of the job's user or as a file of theirs.
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW, 0644);
    const std::string unusable = fd < 0 ? errno_text() : not_ours(fd);
    if (!unusable.empty()) {
      if (fd >= 0) ::close(fd);
      warn("cannot use the log file " + path + ": " + unusable +
               "; worker output goes to the terminal only (give --ddp-log-dir a folder of your own)",
           log_warned_);
      close_logs(worker);
      stop_logging();
      return;
    }
    worker.channels[index(stream)].log = fd;
  }
}

// Through the sink, after what it still has to write there.
void OutputRouter::close_logs(Worker& worker) {
  for (auto& channel : worker.channels)
    if (channel.log >= 0) logs_->close(std::exchange(channel.log, -1));
}

// After a log problem no worker logs any more: a set of log files with holes
// in it would look complete.
void OutputRouter::stop_logging() {
  logging_ = false;
  for (auto& worker : workers_) close_logs(worker);
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
      if (worker.channels[index(stream)].read.get() == fd) return read_channel(worker, stream, SIZE_MAX, true);
  return false;
}

// Reads until EAGAIN, EOF, or `budget` bytes; stops early once the output
// is held (the sinks are full), unless `heed_hold` is false.
bool OutputRouter::read_channel(Worker& worker, Stream stream, std::size_t budget, bool heed_hold) {
  Channel& channel = worker.channels[index(stream)];
  char buffer[65536];
  for (std::size_t taken = 0;;) {
    if (taken > 0 && (taken >= budget || (heed_hold && held()))) return true;
    const ssize_t n = ::read(channel.read.get(), buffer, std::min(sizeof buffer, std::max<std::size_t>(budget - taken, 1)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    Batch batch;
    if (n > 0) {
      taken += std::size_t(n);
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
      const Fd& read = worker.channels[index(stream)].read;
      if (!read) continue;
      // What the pipe holds now: a worker still running may write on and on.
      int pending = 0;
      if (::ioctl(read.get(), FIONREAD, &pending) != 0) pending = 0;
      // One byte more than it holds: EOF, when its worker has ended. All of
      // it, held or not (at most a pipe's capacity per stream): stopping
      // early would cut the line in the middle below, and lose the rest.
      if (!read_channel(worker, stream, std::size_t(std::max(pending, 0)) + 1, false)) continue;
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
  if (worker.channels[index(stream)].log >= 0) batch.log.append(line).push_back('\n');
  if (stream == Stream::Err && options_.tail_lines > 0) {
    if (worker.tail.size() >= options_.tail_lines) worker.tail.pop_front();
    worker.tail.emplace_back(line);
  }
}

void OutputRouter::deliver(Worker& worker, Stream stream, Batch& batch) {
  if (!batch.terminal.empty())
    (stream == Stream::Out ? *out_ : *err_)
        .write(stream == Stream::Out ? options_.out_fd : options_.err_fd, std::move(batch.terminal));
  const int log = worker.channels[index(stream)].log;
  if (!batch.log.empty() && log >= 0) logs_->write(log, std::move(batch.log));
}

bool OutputRouter::held() const { return out_->full() || err_->full() || logs_->full(); }

std::vector<int> OutputRouter::drained_fds() const {
  return {out_->drained_fd(), err_->drained_fd(), logs_->drained_fd()};
}

void OutputRouter::clear_drained() const {
  for (const auto* sink : {out_.get(), err_.get(), logs_.get()}) sink->clear_drained();
}

bool OutputRouter::written() const { return out_->empty() && err_->empty() && logs_->empty(); }

bool OutputRouter::flush(std::chrono::milliseconds patience) {
  bool all = true;
  for (auto* sink : {out_.get(), err_.get(), logs_.get()}) all = sink->flush(patience) && all;
  return all;
}

std::vector<std::string> OutputRouter::tick() {
  std::vector<std::string> said;
  const auto waited = std::max(out_->waiting(), err_->waiting());
  if (!told_held_ && waited >= kHeldNotice) {
    told_held_ = true;
    said.push_back("output is held: the reader of this job's output has taken nothing for " +
                   seconds_text(waited) +
                   " (a pager not paging, Ctrl-S, a slow link?); the workers wait on their own writes and nothing "
                   "is lost; it goes on when the reader reads");
  }
  for (const auto& [sink, what] : {std::pair{out_.get(), "stdout"}, std::pair{err_.get(), "stderr"}})
    if (const auto error = sink->take_error())
      said.push_back("the reader of the agent's " + std::string(what) + " went away (" + *error +
                     "); the workers' output to it is discarded");
  if (const auto error = logs_->take_error()) {
    warn("cannot write the log files in " + options_.log_dir + ": " + *error +
             "; worker output goes to the terminal only",
         log_warned_);
    stop_logging();
  }
  if (auto warning = take_warning()) said.push_back(std::move(*warning));
  return said;
}

std::vector<std::string> OutputRouter::stderr_tail(std::uint32_t local_rank) const {
  const Worker* worker = find_worker(local_rank);
  if (!worker) return {};
  return {worker->tail.begin(), worker->tail.end()};
}

void OutputRouter::reset() {
  for (auto& worker : workers_) close_logs(worker);
  workers_.clear();
}

void OutputRouter::warn(std::string message, bool& once) {
  if (once) return;
  once = true;
  warning_ = warning_ ? *warning_ + "; " + message : std::move(message);
}

std::optional<std::string> OutputRouter::take_warning() { return std::exchange(warning_, std::nullopt); }

}  // namespace ddp::agent
