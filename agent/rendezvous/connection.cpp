#include "rendezvous/connection.hpp"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

namespace ddp::agent {

Connection::Connection(EventLoop& loop, int fd, OnMessage on_message, OnClose on_close)
    : loop_(loop), fd_(fd), on_message_(std::move(on_message)), on_close_(std::move(on_close)) {
  if (auto ok = loop_.add(fd_, EPOLLIN | EPOLLRDHUP, [this](std::uint32_t ev) { on_events(ev); }); !ok) {
    ::close(fd_);
    fd_ = -1;
  }
}

void Connection::trust() {
  trusted_ = true;
  reader_.set_max_line(rdzv::kMaxLineBytes + rdzv::Seal::kOverhead);
}

void Connection::seal(rdzv::Seal seal, std::string peer) {
  trust();
  seal_.emplace(std::move(seal));
  peer_ = std::move(peer);
}

Connection::~Connection() {
  if (fd_ >= 0) {
    loop_.remove(fd_);
    ::close(fd_);
  }
}

void Connection::send(const rdzv::Message& message) {
  if (fd_ < 0) return;
  const auto line = rdzv::encode(message);
  if (line.empty()) {  // a field too long or malformed: our bug, never the peer's
    spdlog::error("internal error: cannot encode a {} message", message.verb);
    return;
  }
  send_line(line);
}

void Connection::send_line(std::string_view line) {
  if (fd_ < 0) return;
  last_sent_ = std::chrono::steady_clock::now();
  if (seal_) {
    line.remove_suffix(line.ends_with('\n') ? 1 : 0);
    out_ += seal_->close(line);
    out_ += '\n';
  } else {
    out_ += line;
  }
  if (out_.size() > kMaxQueuedBytes) {
    shut("the peer does not read what it is sent");
    return;
  }
  flush();
}

void Connection::close(const std::string& why) {
  if (fd_ < 0) return;
  flush();
  shut(why);
}

void Connection::flush() {
  while (fd_ >= 0 && !out_.empty()) {
    const ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      out_.erase(0, std::size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    shut(std::string("send: ") + std::strerror(errno));
    return;
  }
  // One epoll_ctl only when the interest changes, not one per message: at
  // 16,384 nodes that would be node 0's most frequent system call after send.
  if (fd_ < 0 || watching_out_ == !out_.empty()) return;
  watching_out_ = !out_.empty();
  if (auto ok = loop_.modify(fd_, EPOLLIN | EPOLLRDHUP | (watching_out_ ? std::uint32_t(EPOLLOUT) : 0u)); !ok)
    shut(ok.error());
}

void Connection::shut(const std::string& why) {
  if (fd_ < 0) return;
  loop_.remove(fd_);
  ::close(fd_);
  fd_ = -1;
  out_.clear();
  if (on_close_) {
    auto callback = std::move(on_close_);  // once
    callback(why);
  }
}

void Connection::on_events(std::uint32_t events) {
  if (events & EPOLLOUT) flush();
  if (fd_ < 0) return;
  if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) return;
  // Read what there is, up to kReadPerWakeup (the loop calls again while
  // more waits); remember if the stream ended, but deliver what arrived
  // before the end first.
  std::optional<std::string> ended;
  char buf[8192];
  for (std::size_t taken = 0; taken < kReadPerWakeup;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      taken += std::size_t(n);
      if (!trusted_ && (received_ += std::size_t(n)) > kStrangerBudget)
        return shut("protocol error: more than " + std::to_string(kStrangerBudget) + " bytes before authenticating");
      if (auto ok = reader_.feed(std::string_view(buf, std::size_t(n))); !ok)
        return shut("protocol error: " + ok.error());
      // A short read took all there was: the loop is level-triggered, so
      // more (or the end) is reported again, without a recv for EAGAIN.
      if (std::size_t(n) < sizeof buf) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    ended = n == 0 ? std::string("connection closed by the peer") : std::string("recv: ") + std::strerror(errno);
    break;
  }
  // on_message_ may close this connection (never destroy it: see the header).
  while (fd_ >= 0) {
    auto line = reader_.next();
    if (!line) break;
    deliver(*line);
  }
  if (ended) shut(*ended);
}

void Connection::deliver(const std::string& line) {
  constexpr std::size_t kShown = 3;  // then one line for the rest
  std::string opened;
  if (seal_) {
    auto inside = seal_->open(line);
    if (!inside) {
      if (++unopened_ <= kShown)
        spdlog::warn("rendezvous: dropped a message from {}: {}", peer_, inside.error());
      else if (unopened_ == kShown + 1)
        spdlog::warn("rendezvous: dropping more messages from {} that do not open; not shown", peer_);
      return;
    }
    opened = std::move(*inside);
  }
  auto message = rdzv::decode(seal_ ? opened : line);
  if (!message) return shut("protocol error: " + message.error());
  on_message_(*message);
}

}  // namespace ddp::agent
