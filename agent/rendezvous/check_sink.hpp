// Node 0's end of the pre-flight's network checks (preflight.hpp): a TCP
// listener on attempt 0's MASTER_PORT, which the site's firewall already
// opens between the step's nodes and which the workers' store binds only
// after the checks, once this listener is closed. One transfer is awaited
// at a time: a connection first sends the token CHECKNET gave that node (32
// hex digits and '\n'), then bytes until it shuts its side down; the rate is
// the bytes after the first read over the time from it to the last. A connection with another token is
// closed at once, and at most kMaxConnections are open: a stranger can
// slow a check (and so get a node named), never stall or crash node 0.
// The sender closes first (it shuts down its side after the last byte), so
// the TIME_WAIT lands on its node, not on this port.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ddp/base/result.hpp"
#include "event_loop.hpp"

namespace ddp::agent {

class CheckSink {
 public:
  static constexpr std::size_t kMaxConnections = 8;
  explicit CheckSink(EventLoop& loop) : loop_(loop) {}
  CheckSink(const CheckSink&) = delete;
  CheckSink& operator=(const CheckSink&) = delete;
  ~CheckSink() { close(); }

  Status listen(std::uint16_t port);  // on every address
  // The next transfer: the one that starts with `token`.
  void expect(std::string token);
  // Its rate in MB/s once its sender shut down; once.
  std::optional<double> take_rate();
  void close();

 private:
  using Clock = std::chrono::steady_clock;
  struct Peer {
    std::string head;  // the token line so far
    bool proved = false;
  };
  void on_accept();
  void on_readable(int fd);
  void drop(int fd);

  EventLoop& loop_;
  int listen_fd_ = -1;
  std::map<int, Peer> peers_;
  std::string token_;
  std::uint64_t received_ = 0;  // after the first read
  std::optional<Clock::time_point> first_read_, last_read_;
  std::optional<double> rate_;
};

}  // namespace ddp::agent
