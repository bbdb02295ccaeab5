#include "node/duties/check_sink.hpp"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rendezvous/listen_socket.hpp"

namespace ddp::agent {

namespace {
constexpr std::size_t kTokenLine = 33;  // 32 hex digits and '\n'

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool is_token_line(const std::string& line) {
  return line.size() == kTokenLine && line.back() == '\n' &&
         line.find_first_not_of("0123456789abcdef") == kTokenLine - 1;
}
}  // namespace

Status CheckSink::listen(std::uint16_t port) {
  const int fd = listen_socket(port, false, 16);
  if (fd < 0)
    return fail("cannot listen for the pre-flight's network checks on port " + std::to_string(port) + ": " +
                std::strerror(-fd));
  sockaddr_in bound{};
  socklen_t size = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &size) != 0) {
    const int error = errno;
    ::close(fd);
    return fail(std::string("cannot read the pre-flight check port: ") + std::strerror(error));
  }
  listen_fd_ = fd;
  port_ = ntohs(bound.sin_port);
  return loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

// The bytes after the first read over the time from it to the last; from
// the token's arrival when they all came in one read (or with the token).
std::optional<double> CheckSink::rate_of(const Peer& peer) {
  if (!peer.first_read) return std::nullopt;
  if (peer.last_read > peer.first_read) return double(peer.received) / 1e6 / seconds(*peer.last_read - *peer.first_read);
  const auto since_token = seconds(*peer.last_read - *peer.token_read);
  return since_token > 0 ? double(peer.first_bytes) / 1e6 / since_token : std::optional<double>();
}

std::vector<CheckSink::Received> CheckSink::take_received() { return std::exchange(received_, {}); }

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
  if (peers_.size() >= kMaxConnections) drop(arrival_.front());  // the oldest goes
  peers_[fd] = Peer{};
  arrival_.push_back(fd);
  if (!loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); })) drop(fd);
}

void CheckSink::on_readable(int fd) {
  static thread_local std::vector<char> buffer(1 << 20);
  const auto it = peers_.find(fd);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // its sender is done: the transfer's rate
    if (peer.token_read) received_.push_back({peer.head.substr(0, kTokenLine - 1), rate_of(peer)});
    return drop(fd);
  }
  std::size_t used = 0;
  const auto now = Clock::now();
  if (!peer.token_read) {  // the token line first
    while (used < std::size_t(n) && peer.head.size() < kTokenLine) peer.head += buffer[used++];
    if (peer.head.size() < kTokenLine) return;
    if (!is_token_line(peer.head)) return drop(fd);
    peer.token_read = now;
  }
  if (std::size_t(n) == used) return;
  if (peer.first_read)
    peer.received += std::uint64_t(n) - used;  // the first read's bytes came before the clock started
  else
    peer.first_read = now, peer.first_bytes = std::uint64_t(n) - used;
  peer.last_read = now;
}

void CheckSink::drop(int fd) {
  loop_.remove(fd);
  ::close(fd);
  peers_.erase(fd);
  std::erase(arrival_, fd);
}

}  // namespace ddp::agent
