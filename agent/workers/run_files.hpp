// The agent's files for its workers: one directory per agent
// ($TMPDIR/ddp-agent-UID-PID), a folder per attempt and rank in it:
//   attempt_A/rank_R/error.json  TORCHELASTIC_ERROR_FILE: torch's @record
//                                writes the worker's exception there, and the
//                                root cause points at it
//   attempt_A/rank_R/progress    DDP_PROGRESS_FILE: the hang watch's progress
//                                signal (ddp/wire/progress_file.hpp)
// Kept after a failure, removed when the run ends well.
#pragma once

#include <cstdint>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp::agent {

class RunFiles {
 public:
  RunFiles();  // under $TMPDIR (or /tmp), named for this user and process

  std::string error_file(std::uint32_t attempt, std::uint32_t rank) const;
  std::string progress_file(std::uint32_t attempt, std::uint32_t rank) const;
  // The rank's folder, and with `progress` its progress file, created as
  // never touched (the hang watch starts at a worker's first touch).
  Status prepare(std::uint32_t attempt, std::uint32_t rank, bool progress) const;
  void remove_all() const;

 private:
  std::string rank_dir(std::uint32_t attempt, std::uint32_t rank) const;
  std::string dir_;
};

}  // namespace ddp::agent
