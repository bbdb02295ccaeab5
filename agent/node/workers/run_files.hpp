// The agent's files for its workers, in a directory of its own that no other
// user can plant in, replace or read: made by mkdtemp (mode 0700, a name
// nobody can guess or claim first) under the job's TMPDIR, or /tmp. One
// folder per attempt and rank in it:
//   attempt_A/rank_R/error.json  TORCHELASTIC_ERROR_FILE: torch's @record
//                                writes the worker's exception there, and the
//                                root cause points at it
//   attempt_A/rank_R/progress    DDP_PROGRESS_FILE: the hang watch's progress
//                                signal (ddp/wire/progress_file.hpp)
//   attempt_A/rank_R/nccl        DDP_NCCL_STATS_FILE: its GPU's time in NCCL's
//                                collectives, from our profiler plugin
//                                (ddp/wire/nccl_stats.hpp)
// Removed when the agent ends (however the run ended: well, failed, stopped by
// Slurm), unless keep() was called: a failure this node reported names an
// error file in it, which the root cause points at.
#pragma once

#include <cstdint>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp::agent {

class RunFiles {
 public:
  // The directory, made now; the error names it and why not (the agent
  // decides what a job without run files may still do).
  static Result<RunFiles> make();
  RunFiles() = default;  // none: every path is empty, prepare() fails
  RunFiles(RunFiles&& other) noexcept;
  RunFiles& operator=(RunFiles&& other) noexcept;
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;
  ~RunFiles();

  bool made() const { return !dir_.empty(); }
  std::string error_file(std::uint32_t attempt, std::uint32_t rank) const;
  std::string progress_file(std::uint32_t attempt, std::uint32_t rank) const;
  std::string nccl_stats_file(std::uint32_t attempt, std::uint32_t rank) const;
  // The rank's folder, and with `progress` its progress file, created new,
  // as never touched (the hang watch starts at a worker's first touch).
  Status prepare(std::uint32_t attempt, std::uint32_t rank, bool progress) const;
  // The root cause points into it: left for the user to read.
  void keep() { keep_ = true; }

 private:
  explicit RunFiles(std::string dir) : dir_(std::move(dir)) {}
  std::string rank_dir(std::uint32_t attempt, std::uint32_t rank) const;
  void remove_unless_kept() noexcept;
  std::string dir_;
  bool keep_ = false;
};

}  // namespace ddp::agent
