// Resuming from a snapshot: rank 0 restores the newest complete snapshot
// (snapshot_state.hpp), and where training stands (ResumePoint, from its
// metadata: snapshot_meta.hpp) goes from rank 0 to the other ranks through
// the bootstrap store; the state itself follows in a broadcast from rank 0
// (start_from_rank_0, which every run goes through, resumed or not).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "model/ops.hpp"
#include "process_group/bootstrap.hpp"
#include "train/options.hpp"
#include "train/setup.hpp"
#include "train/snapshot_meta.hpp"
#include "train/snapshot_state.hpp"

namespace ddp::train {

// The store's copy, between ranks of one run: nothing (no snapshot), or the
// four numbers as little-endian 64-bit integers.
std::vector<char> encode_resume_point(const std::optional<ResumePoint>& point);
Result<std::optional<ResumePoint>> decode_resume_point(const std::vector<char>& bytes);

// Every rank learns rank 0's resume point (`lead`: this is rank 0, `mine` is it).
Result<std::optional<ResumePoint>> share_resume_point(Session& session, bool lead,
                                                      const std::optional<ResumePoint>& mine,
                                                      std::chrono::seconds timeout);

// DDP's start, on every rank: rank 0 restores the newest snapshot (with
// --snapshot-dir, unless --no-resume) if a run of `plan` with this global
// batch (`batch_size`) wrote it, every rank learns its resume point, and
// every rank takes rank 0's parameters and optimizer state. Nothing:
// training starts from scratch. `session` null: a process on its own.
Result<std::optional<ResumePoint>> start_from_rank_0(const TrainOptions& o, const WorkerIdentity& id,
                                                     const RunPlan& plan, int batch_size, Session* session,
                                                     Backend& b, const TrainState& state);

}  // namespace ddp::train
