// A node's receiving end of the pre-flight's network checks (preflight.hpp):
// every agent of a step run with --ddp-preflight listens on a port of the
// kernel's choosing (the workers' Gloo and NCCL connect between every pair of
// nodes on such ports too) and says which in its JOIN. A transfer is a
// connection that sends its head line (rdzv_auth.hpp's transfer_head: the
// token node 0's CHECKNET gave its sender, and the proof that the sender has
// the step's secret), then bytes until it shuts its side down; its rate is
// the bytes after the first read over the time from it to the last, and goes
// to node 0 with the token, which tells it whose transfer it was. Every
// transfer that proved itself is answered at its end, so node 0 never waits
// out a turn for one: one that came in a single read (a starved sender) is
// timed from its head's arrival, one with no bytes is said so.
//
// Strangers (any user on the cluster can connect): a first line that is not
// a proven head closes the connection; at most kMaxWaiting connections wait
// for their head, the oldest going for a new one (each connection is read as
// it is accepted: a real sender's head is there by then); a proven transfer is never
// closed for a stranger's sake. Out of descriptors, the oldest waiting one
// goes, or accepting pauses until tick(). So a flood can slow a transfer
// (bandwidth), never end one and so never get a node named. The sender
// closes first (it shuts down its side after the last byte), so the
// TIME_WAIT lands on its node, not here.
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
  static constexpr std::size_t kMaxWaiting = 16;    // connections yet to send a proven head
  static constexpr std::size_t kMaxTransfers = 16;  // proven ones (node 0 orders a few at a time)
  // `secret` and `run`: the step's, to check each transfer's head.
  CheckSink(EventLoop& loop, std::string secret, std::string run)
      : loop_(loop), secret_(std::move(secret)), run_(std::move(run)) {}
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
  // Accepting again after it paused out of descriptors; from the loop's top level.
  void tick();

 private:
  using Clock = std::chrono::steady_clock;
  struct Peer {
    std::string head;  // the head line so far
    std::string token;  // once the head proved itself
    std::uint64_t received = 0, first_bytes = 0;  // after the first read; in it
    std::optional<Clock::time_point> token_read, first_read, last_read;
  };
  static std::optional<double> rate_of(const Peer& peer);
  void on_accept();
  bool accept_one();  // false: nothing more to accept now
  void on_readable(int fd);
  void drop(int fd);
  std::optional<int> oldest_waiting() const;

  EventLoop& loop_;
  std::string secret_, run_;
  bool accept_paused_ = false;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::map<int, Peer> peers_;  // by fd: the lowest is not the oldest, so the order of arrival beside it
  std::vector<int> arrival_;
  std::vector<Received> received_;
};

}  // namespace ddp::agent
