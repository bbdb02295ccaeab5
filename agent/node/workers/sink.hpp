// Where the agent's output goes (its stdout, its stderr, the workers' log
// files), written by a thread of its own: a reader that pauses (`srun ... |
// less` before paging, Ctrl-S, a slow ssh link, an NFS server that stalls)
// blocks that thread, never the agent's event loop, so heartbeats, the
// rendezvous and stopping go on; and nothing is dropped. The queue is
// bounded for the workers' output: past kHighWater the router stops reading
// the workers' pipes, so the workers block on their own writes (as under
// torchrun), until the queue has drained below kLowWater, which the sink says
// on drained_fd(). The agent's own messages are never held back.
//
// A reader that goes away (EPIPE: srun killed, the pager quit) takes nothing
// more: what is queued for it and what comes later is discarded, said once
// (take_error), and the workers go on. A reader that stays but never reads
// holds the workers until the step ends (scancel, the time limit).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace ddp::agent {

class Sink {
 public:
  static constexpr std::size_t kHighWater = 1 << 20;
  static constexpr std::size_t kLowWater = 256 << 10;

  Sink();
  // Writes what is still queued while its readers take it, a second at most
  // without progress. The thread is never joined: one blocked in write() on
  // a reader that never comes back ends with the process.
  ~Sink();
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  // Queues `text` for `fd` (which must stay open until close(fd) has been
  // processed). Never blocks, never drops while fd's reader is there.
  void write(int fd, std::string text);
  // Closes `fd` once what was queued for it before is written.
  void close(int fd);
  // More than kHighWater bytes queued: hold the workers' output.
  bool full() const;
  // Readable (an eventfd) once a sink that was full has drained below
  // kLowWater; clear_drained() reads it.
  int drained_fd() const;
  void clear_drained() const;
  bool empty() const;
  // How long queued text has waited without a byte written; zero when
  // nothing waits.
  std::chrono::milliseconds waiting() const;
  // Waits until the queue is empty, or `patience` passed without a byte
  // written; true when empty.
  bool flush(std::chrono::milliseconds patience);
  // The first write error since the last call (the reader gone, a full disk).
  std::optional<std::string> take_error();

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the thread, which may outlive the Sink
};

}  // namespace ddp::agent
