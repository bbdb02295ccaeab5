#include "event_loop.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ddp::agent {

EventLoop::EventLoop() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {}

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

Status EventLoop::add(int fd, std::uint32_t events, Handler handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
    return fail(std::string("epoll_ctl(ADD): ") + std::strerror(errno));
  handlers_[fd] = std::make_shared<Handler>(std::move(handler));
  return Ok{};
}

Status EventLoop::modify(int fd, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0)
    return fail(std::string("epoll_ctl(MOD): ") + std::strerror(errno));
  return Ok{};
}

void EventLoop::remove(int fd) {
  if (handlers_.erase(fd) > 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

Status EventLoop::run_once(std::chrono::milliseconds timeout) {
  epoll_event events[32];
  const int n = ::epoll_wait(epoll_fd_, events, 32, int(timeout.count()));
  if (n < 0) {
    if (errno == EINTR) return Ok{};
    return fail(std::string("epoll_wait: ") + std::strerror(errno));
  }
  for (int i = 0; i < n; ++i) {
    const auto it = handlers_.find(events[i].data.fd);
    if (it == handlers_.end()) continue;  // removed by an earlier handler in this batch
    const auto handler = it->second;      // keeps it alive through the call
    (*handler)(events[i].events);
  }
  return Ok{};
}

}  // namespace ddp::agent
