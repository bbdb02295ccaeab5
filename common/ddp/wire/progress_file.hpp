// The progress file (DDP_PROGRESS_FILE) between a worker and its agent's hang
// watch (--ddp-hang-timeout, agent/node/duties/hang_rule.hpp), written and read here:
//  - the agent creates one per worker with the epoch as its time: "never
//    touched", so the watch of a rank starts at its first touch;
//  - the worker touches it as it makes progress: a script in one line
//    (pathlib.Path(os.environ["DDP_PROGRESS_FILE"]).touch()), ddp-train by
//    writing its step number at the start of every step (ProgressWriter);
//  - the agent reads its time, and the step number if it holds one: when
//    every rank has stalled, the rank behind is the suspect (file times come
//    from a coarse clock, a few ms, and fast steps tie).
// The text is the step in decimal, then blanks or a newline; ddp-train writes
// it fixed width ("%-20llu\n", 21 bytes at offset 0) so that one pwrite
// replaces the last step whole, with no truncate in between.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp {

// A worker's progress file: its time, and the step number written in it, if any.
struct Progress {
  std::chrono::system_clock::time_point last;  // the epoch: never touched
  std::optional<std::uint64_t> step;
};

// Creates `path`, a new empty file (an existing name, a link or a FIFO is an
// error), with the epoch as its time.
Status create_progress_file(const std::string& path);

// The worker's side: one pwrite per mark, no allocation, no error to handle
// (a rank whose marks fail is named by the watch, which is the truth).
class ProgressWriter {
 public:
  // An empty path, or a file that cannot be opened: mark() does nothing.
  explicit ProgressWriter(const std::string& path);
  ~ProgressWriter();
  ProgressWriter(const ProgressWriter&) = delete;
  ProgressWriter& operator=(const ProgressWriter&) = delete;
  // Progress at `step`: touches the file and writes the step into it.
  void mark(std::uint64_t step) const;

 private:
  int fd_ = -1;
};

// The file's time and step number; nullopt if it does not exist.
std::optional<Progress> read_progress(const std::string& path);

}  // namespace ddp
