#include "node/duties/check_sink.hpp"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ddp/wire/rdzv_auth.hpp"
#include "rendezvous/listen_socket.hpp"

namespace ddp::agent {

namespace {
double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

Status CheckSink::listen(std::uint16_t port) {
  const int fd = listen_socket(port, false, 128);
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

std::optional<int> CheckSink::oldest_waiting() const {
  for (const int fd : arrival_)
    if (const auto it = peers_.find(fd); it != peers_.end() && it->second.token.empty()) return fd;
  return std::nullopt;
}

// Up to kAcceptBatch a wakeup, so that a flood does not fill the kernel's
// queue and drop a real sender's SYN; each read at once, so that a real
// transfer (its head sent right after its connect) is proven before the
// next stranger could push it out of the waiting ones.
void CheckSink::on_accept() {
  constexpr int kAcceptBatch = 16;
  for (int i = 0; i < kAcceptBatch && listen_fd_ >= 0 && !accept_paused_; ++i)
    if (!accept_one()) return;
}

bool CheckSink::accept_one() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EINTR || errno == ECONNABORTED) return true;
    if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) return false;
    // Out of descriptors: a stranger's goes, or the socket stays unpolled
    // until tick() (level-triggered, it would wake the loop for ever).
    if (const auto victim = oldest_waiting()) {
      drop(*victim);
      return true;
    }
    accept_paused_ = loop_.modify(listen_fd_, 0).ok();
    return false;
  }
  const auto waiting = std::count_if(peers_.begin(), peers_.end(), [](const auto& p) { return p.second.token.empty(); });
  if (std::size_t(waiting) >= kMaxWaiting) drop(*oldest_waiting());
  if (peers_.size() >= kMaxWaiting + kMaxTransfers) {  // every slot a proven transfer: no room
    ::close(fd);
    return true;
  }
  peers_[fd] = Peer{};
  arrival_.push_back(fd);
  if (!loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); })) {
    drop(fd);
    return true;
  }
  on_readable(fd);
  return true;
}

void CheckSink::tick() {
  if (accept_paused_ && listen_fd_ >= 0 && loop_.modify(listen_fd_, EPOLLIN).ok()) accept_paused_ = false;
}

void CheckSink::on_readable(int fd) {
  static thread_local std::vector<char> buffer(1 << 20);
  const auto it = peers_.find(fd);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // its sender is done: the transfer's rate
    if (peer.token_read) received_.push_back({peer.token, rate_of(peer)});
    return drop(fd);
  }
  std::size_t used = 0;
  const auto now = Clock::now();
  if (!peer.token_read) {  // the head line first
    while (used < std::size_t(n) && peer.head.size() < rdzv::kTransferHeadBytes) peer.head += buffer[used++];
    if (peer.head.size() < rdzv::kTransferHeadBytes) return;
    auto token = peer.head.back() == '\n'
                     ? rdzv::verified_token(secret_, run_, std::string_view(peer.head).substr(0, peer.head.size() - 1))
                     : std::nullopt;
    if (!token) return drop(fd);
    peer.token = std::move(*token);
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
