// A node's receiving end of the pre-flight's network checks (preflight.hpp):
// every agent of a step run with --ddp-preflight listens on a port of the
// kernel's choosing (the workers' Gloo and NCCL connect between every pair of
// nodes on such ports too) and says which in its JOIN. A transfer is a
// connection that sends a token (32 hex digits and '\n': the one node 0's
// CHECKNET gave its sender), then bytes until it shuts its side down; its
// rate is the bytes after the first read over the time from it to the last,
// and goes to node 0 with the token, which tells it whose transfer it was.
// Every transfer that sent its token is answered at its end, so node 0
// never waits out a turn for one: one that came in a single read (a starved
// sender) is timed from its token's arrival, one with no bytes is said so.
// A line that is not a token is closed at once, and at most kMaxConnections
// are open (the oldest goes): a stranger can slow a check (and so get a
// node named), never stall or crash the agent, and a token node 0 did not
// give is ignored there. The sender closes first (it shuts down its side
// after the last byte), so the TIME_WAIT lands on its node, not here.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

  // On every address, at `port` (0: the kernel's choice); port() says which.
  Status listen(std::uint16_t port);
  std::uint16_t port() const { return port_; }
  // The transfers that ended since the last call: each one's token and its
  // rate in MB/s, or none when it brought no bytes after the token.
  struct Received {
    std::string token;
    std::optional<double> mb_per_s;
  };
  std::vector<Received> take_received();
  void close();

 private:
  using Clock = std::chrono::steady_clock;
  struct Peer {
    std::string head;  // the token line so far
    std::uint64_t received = 0, first_bytes = 0;  // after the first read; in it
    std::optional<Clock::time_point> token_read, first_read, last_read;
  };
  static std::optional<double> rate_of(const Peer& peer);
  void on_accept();
  void on_readable(int fd);
  void drop(int fd);

  EventLoop& loop_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::map<int, Peer> peers_;  // by fd: the lowest is not the oldest, so the order of arrival beside it
  std::vector<int> arrival_;
  std::vector<Received> received_;
};

}  // namespace ddp::agent
