#include "node/workers/sink.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace ddp::agent {

using Clock = std::chrono::steady_clock;

struct Sink::State {
  struct Item {
    int fd;
    std::string text;  // empty: close fd
  };

  std::mutex mutex;
  std::condition_variable wake;      // the thread: something to write, or stop
  std::condition_variable progress;  // flush(): a byte written, or the queue empty
  std::deque<Item> queue;
  std::size_t queued_bytes = 0;
  bool busy = false;  // the thread holds an item it has not finished
  bool was_full = false;
  Clock::time_point waiting_since;  // the last progress, or when text began to wait
  std::set<int> broken;             // fds whose reader went away: their output is discarded
  std::optional<std::string> error;
  bool stopping = false;
  int drained_fd = -1;

  ~State() {
    if (drained_fd >= 0) ::close(drained_fd);
  }
  void run();
  void write_item(Item& item, std::unique_lock<std::mutex>& lock);
  void written(std::size_t n);
};

void Sink::State::run() {
  std::unique_lock lock(mutex);
  for (;;) {
    wake.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty()) return;  // stopping, and nothing left
    Item item = std::move(queue.front());
    queue.pop_front();
    busy = true;
    write_item(item, lock);
    busy = false;
    progress.notify_all();
  }
}

// With the lock held on entry and exit; released while writing.
void Sink::State::write_item(Item& item, std::unique_lock<std::mutex>& lock) {
  if (item.text.empty()) {
    broken.erase(item.fd);
    lock.unlock();
    ::close(item.fd);
    lock.lock();
    return;
  }
  std::string_view rest = item.text;
  while (!rest.empty()) {
    if (broken.count(item.fd)) return written(rest.size());  // discarded
    lock.unlock();
    const ssize_t n = ::write(item.fd, rest.data(), rest.size());
    const int err = errno;
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {  // a non-blocking fd: wait for room
      pollfd p{item.fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
    }
    lock.lock();
    if (n > 0) {
      rest.remove_prefix(std::size_t(n));
      written(std::size_t(n));
    } else if (n < 0 && err != EINTR && err != EAGAIN && err != EWOULDBLOCK) {
      broken.insert(item.fd);
      if (!error) error = std::strerror(err);
    }
  }
}

// With the lock held: `n` bytes left the queue.
void Sink::State::written(std::size_t n) {
  queued_bytes -= n;
  waiting_since = Clock::now();
  if (was_full && queued_bytes < kLowWater) {
    was_full = false;
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(drained_fd, &one, sizeof one);
  }
  progress.notify_all();
}

Sink::Sink() : state_(std::make_shared<State>()) {
  state_->drained_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  // Every signal blocked in the thread from its first instruction: the
  // agent's signals (SIGTERM, SIGCHLD, ...) are read by its loop's signalfd,
  // which a thread that let them in would steal them from (or die of them),
  // and a reader gone away makes a write fail with EPIPE, not kill.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  std::thread([state = state_] { state->run(); }).detach();
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

Sink::~Sink() {
  flush(std::chrono::milliseconds(1000));
  std::lock_guard lock(state_->mutex);
  state_->stopping = true;
  state_->wake.notify_all();
  // The eventfd goes with the State, once the thread lets go of it.
}

void Sink::write(int fd, std::string text) {
  if (text.empty()) return;
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (s.broken.count(fd)) return;
  if (s.queue.empty() && !s.busy) s.waiting_since = Clock::now();
  s.queued_bytes += text.size();
  if (s.queued_bytes > kHighWater) s.was_full = true;
  s.queue.push_back({fd, std::move(text)});
  s.wake.notify_one();
}

void Sink::close(int fd) {
  std::lock_guard lock(state_->mutex);
  state_->queue.push_back({fd, {}});
  state_->wake.notify_one();
}

bool Sink::full() const {
  std::lock_guard lock(state_->mutex);
  return state_->queued_bytes > kHighWater;
}

int Sink::drained_fd() const { return state_->drained_fd; }

void Sink::clear_drained() const {
  std::uint64_t count = 0;
  [[maybe_unused]] auto r = ::read(state_->drained_fd, &count, sizeof count);
}

bool Sink::empty() const {
  std::lock_guard lock(state_->mutex);
  return state_->queue.empty() && !state_->busy;
}

std::chrono::milliseconds Sink::waiting() const {
  std::lock_guard lock(state_->mutex);
  if (state_->queued_bytes == 0) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - state_->waiting_since);
}

bool Sink::flush(std::chrono::milliseconds patience) {
  std::unique_lock lock(state_->mutex);
  State& s = *state_;
  for (;;) {
    if (s.queue.empty() && !s.busy) return true;
    if (Clock::now() - s.waiting_since >= patience) return false;
    s.progress.wait_for(lock, patience);
  }
}

std::optional<std::string> Sink::take_error() {
  std::lock_guard lock(state_->mutex);
  return std::exchange(state_->error, std::nullopt);
}

}  // namespace ddp::agent
