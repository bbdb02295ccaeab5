// A small epoll loop: file descriptors with handlers, and a wait with a timeout.
// Single-threaded; a handler may add or remove descriptors (its own included).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "ddp/base/result.hpp"

namespace ddp::agent {

class EventLoop {
 public:
  using Handler = std::function<void(std::uint32_t events)>;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  bool ok() const { return epoll_fd_ >= 0; }
  Status add(int fd, std::uint32_t events, Handler handler);
  Status modify(int fd, std::uint32_t events);
  void remove(int fd);  // does not close fd
  // Waits up to `timeout` for events and runs their handlers.
  Status run_once(std::chrono::milliseconds timeout);

 private:
  int epoll_fd_ = -1;
  // shared_ptr: a handler stays alive while it runs even if it removes itself.
  std::map<int, std::shared_ptr<Handler>> handlers_;
};

}  // namespace ddp::agent
