// One rendezvous TCP connection in the event loop: non-blocking, line-framed
// protocol messages in, a bounded queue of messages out. Every way it can end
// (EOF, error, oversized or malformed input, a full queue) calls on_close once
// with the reason.
//
// Owners must not destroy a Connection from inside its own callbacks (the
// callback's caller still runs on it): close() it there and destroy it later,
// from the event loop's top level.
#pragma once

#include <functional>
#include <string>

#include "ddp/wire/rdzv_protocol.hpp"
#include "event_loop.hpp"

namespace ddp::agent {

class Connection {
 public:
  using OnMessage = std::function<void(const rdzv::Message&)>;
  using OnClose = std::function<void(const std::string& why)>;

  // Takes ownership of the connected, non-blocking socket `fd`.
  Connection(EventLoop& loop, int fd, OnMessage on_message, OnClose on_close);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void send(const rdzv::Message& message);
  // Sends what is queued, as far as the socket takes it, then closes.
  void close(const std::string& why);
  bool is_open() const { return fd_ >= 0; }

  static constexpr std::size_t kMaxQueuedBytes = 1 << 20;

 private:
  void on_events(std::uint32_t events);
  void flush();
  void shut(const std::string& why);

  EventLoop& loop_;
  int fd_;
  OnMessage on_message_;
  OnClose on_close_;
  rdzv::LineReader reader_;
  std::string out_;
};

}  // namespace ddp::agent
