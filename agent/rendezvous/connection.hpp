// One rendezvous TCP connection in the event loop: non-blocking, line-framed
// protocol messages in, a bounded queue of messages out. Every way it can end
// (EOF, error, oversized or malformed input, a full queue, a stranger over
// its budget) calls on_close once with the reason.
//
// Until the peer has proved the step's secret (trust()), it is a stranger:
// lines of 1 KiB at most and 4 KiB in all, then the connection is closed. A
// handshake needs a few hundred bytes; nobody gets to make the agent buffer
// or decode a flood. Trusted or not, one wakeup reads at most 64 KiB, so one
// busy peer cannot keep the loop from the others, the heartbeats and the
// workers.
//
// Once sealed (seal(), after the handshake), every line out is sealed and
// every line in must open (rdzv_auth.hpp): one that does not (forged,
// altered, replayed) is dropped and logged, the first few with the line.
//
// Owners must not destroy a Connection from inside its own callbacks (the
// callback's caller still runs on it): close() it there and destroy it later,
// from the event loop's top level.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ddp/wire/rdzv_auth.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "event_loop.hpp"

namespace ddp::agent {

class Connection {
 public:
  using OnMessage = std::function<void(const rdzv::Message&)>;
  using OnClose = std::function<void(const std::string& why)>;

  // Takes ownership of the connected, non-blocking socket `fd`.
  Connection(EventLoop& loop, int fd, OnMessage on_message, OnClose on_close);
  // The peer proved the step's secret: lines up to rdzv::kMaxLineBytes, no budget.
  void trust();
  // The handshake is done: trusted, and sealed both ways from here on.
  // `peer` names the other end in the log ("node 3 (10.0.0.4:51234)").
  void seal(rdzv::Seal seal, std::string peer);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void send(const rdzv::Message& message);
  // A line rdzv::encode() made (a broadcast encodes once for every peer).
  void send_line(std::string_view line);
  // Sends what is queued, as far as the socket takes it, then closes.
  void close(const std::string& why);
  bool is_open() const { return fd_ >= 0; }
  // When a message last went to the peer (queued, if the socket was full):
  // any message counts as a heartbeat (heartbeat.hpp).
  std::chrono::steady_clock::time_point last_sent() const { return last_sent_; }

  static constexpr std::size_t kMaxQueuedBytes = 1 << 20;
  static constexpr std::size_t kStrangerLine = 1024;
  static constexpr std::size_t kStrangerBudget = 4096;
  static constexpr std::size_t kReadPerWakeup = 64 << 10;

 private:
  void on_events(std::uint32_t events);
  void flush();
  void shut(const std::string& why);
  void deliver(const std::string& line);

  EventLoop& loop_;
  int fd_;
  OnMessage on_message_;
  OnClose on_close_;
  rdzv::LineReader reader_{kStrangerLine};
  std::size_t received_ = 0;  // bytes taken from a stranger
  bool trusted_ = false;
  std::optional<rdzv::Seal> seal_;
  std::string peer_;          // for the log, once sealed
  std::size_t unopened_ = 0;  // sealed lines that did not open
  std::string out_;
  bool watching_out_ = false;  // EPOLLOUT in the loop's interest: changed only when that changes
  std::chrono::steady_clock::time_point last_sent_ = std::chrono::steady_clock::now();
};

}  // namespace ddp::agent
