#include "rendezvous/check_sink.hpp"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "rendezvous/listen_socket.hpp"

namespace ddp::agent {

namespace {
constexpr std::size_t kTokenLine = 33;  // 32 hex digits and '\n'
}

Status CheckSink::listen(std::uint16_t port) {
  const int fd = listen_socket(port, false, 16);
  if (fd < 0)
    return fail("cannot listen for the pre-flight's network checks on port " + std::to_string(port) + ": " +
                std::strerror(-fd));
  listen_fd_ = fd;
  return loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

void CheckSink::expect(std::string token) {
  for (auto& [fd, peer] : peers_) peer.proved = false;  // an earlier transfer's sender is done with
  token_ = std::move(token);
  received_ = 0;
  first_read_.reset();
  last_read_.reset();
  rate_.reset();
}

std::optional<double> CheckSink::take_rate() { return std::exchange(rate_, std::nullopt); }

void CheckSink::close() {
  while (!peers_.empty()) drop(peers_.begin()->first);
  if (listen_fd_ >= 0) {
    loop_.remove(listen_fd_);
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

void CheckSink::on_accept() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  if (peers_.size() >= kMaxConnections) drop(peers_.begin()->first);  // the oldest goes
  peers_[fd] = Peer{};
  if (!loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); })) {
    peers_.erase(fd);
    ::close(fd);
  }
}

void CheckSink::on_readable(int fd) {
  static thread_local std::vector<char> buffer(1 << 20);
  const auto it = peers_.find(fd);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // its sender is done: the transfer's rate, if it was the awaited one
    if (peer.proved && first_read_ && last_read_ > first_read_)
      rate_ = double(received_) / 1e6 / std::chrono::duration<double>(*last_read_ - *first_read_).count();
    if (peer.proved) token_.clear();  // once: a second sender of the same token is refused
    return drop(fd);
  }
  std::size_t used = 0;
  if (!peer.proved) {  // the token line first
    while (used < std::size_t(n) && peer.head.size() < kTokenLine) peer.head += buffer[used++];
    if (peer.head.size() < kTokenLine) return;
    if (token_.empty() || peer.head != token_ + "\n" || first_read_) return drop(fd);
    peer.proved = true;
  }
  if (std::size_t(n) == used) return;
  const auto now = Clock::now();
  if (first_read_)
    received_ += std::uint64_t(n) - used;  // the first read's bytes came before the clock started
  else
    first_read_ = now;
  last_read_ = now;
}

void CheckSink::drop(int fd) {
  loop_.remove(fd);
  ::close(fd);
  peers_.erase(fd);
}

}  // namespace ddp::agent
