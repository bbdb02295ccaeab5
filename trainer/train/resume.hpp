// Resuming from a snapshot: rank 0 reads the newest complete snapshot, and
// where training stands (ResumePoint, from its metadata: snapshot_meta.hpp)
// goes from rank 0 to the other ranks through the bootstrap store; the state
// itself follows in a broadcast from rank 0 (start_from_rank_0, which every
// run goes through, resumed or not).
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
#include "train/snapshot_meta.hpp"

namespace ddp::train {

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

// DDP's start, on every rank: rank 0 restores the newest snapshot (with
// --snapshot-dir, unless --no-resume), every rank learns its resume point,
// and every rank takes rank 0's parameters and optimizer state. Nothing:
// training starts from scratch. `session` null: a process on its own.
Result<std::optional<ResumePoint>> start_from_rank_0(const TrainOptions& o, const WorkerIdentity& id,
                                                     const RunPlan& plan, Session* session, Backend& b,
                                                     const TrainState& state);

}  // namespace ddp::train
