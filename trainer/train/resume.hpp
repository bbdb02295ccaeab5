// Resuming from a snapshot: where training stands (ResumePoint), read
// strictly from a snapshot's metadata, and carried from rank 0 to the other
// ranks through the bootstrap store. Rank 0 reads the newest complete
// snapshot; the state itself follows in the trainer's broadcast.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "dist/bootstrap.hpp"
#include "model/ops.hpp"
#include "train/options.hpp"
#include "train/setup.hpp"
#include "train/snapshot.hpp"

namespace ddp::train {

struct ResumePoint {
  int epoch = 0;                // the epoch to go on with (0-based)
  long long step_in_epoch = 0;  // its first step still to run
  long long global_step = 0;    // optimizer steps taken so far
  int adam_step = 0;            // the host's copy of Adam's step count
  bool operator==(const ResumePoint&) const = default;
};

// The fields epoch, step_in_epoch, global_step and adam_step of `snapshot`
// (read from `path`), each a whole number in its type's range. Errors name the
// file, the field and the fix.
Result<ResumePoint> read_resume_point(const Snapshot& snapshot, const std::string& path);

// The store's copy, between ranks of one run: nothing (no snapshot), or the
// four numbers as little-endian 64-bit integers.
std::vector<char> encode_resume_point(const std::optional<ResumePoint>& point);
Result<std::optional<ResumePoint>> decode_resume_point(const std::vector<char>& bytes);

// Where the model's state lives in ops memory; `optimizer_b` null for SGD.
struct TrainState {
  float* parameters = nullptr;
  float* optimizer_a = nullptr;
  float* optimizer_b = nullptr;
};

// Rank 0 with --snapshot-dir and resume on: loads the newest complete snapshot
// into `state` after checking that it was written by a run like this one.
// Nothing when there is none.
Result<std::optional<ResumePoint>> restore_newest_snapshot(const TrainOptions& o, const RunPlan& plan, int world,
                                                           Ops& ops, const TrainState& state);

// Every rank learns rank 0's resume point (`lead`: this is rank 0, `mine` is it).
Result<std::optional<ResumePoint>> share_resume_point(Session& session, bool lead,
                                                      const std::optional<ResumePoint>& mine,
                                                      std::chrono::seconds timeout);

}  // namespace ddp::train
