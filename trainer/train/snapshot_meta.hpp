// A snapshot's metadata (Snapshot::meta): the run that wrote it and where it
// stood. Written when a snapshot is saved (to_meta) and read back when it is
// restored (from_meta: snapshot_state.cpp), both here. The metadata's own
// format, 1 in every snapshot format (snapshot.hpp), one key=value each:
//   format=1  model  optimizer  lr  batch_size  accum_steps  world_size
//   epoch  step_in_epoch  global_step  adam_step  sampler_seed  shuffle  data
// Reading is strict: a snapshot is ours only if every field is, whatever its
// checksum says.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp::train {

// Where training stands: the step a resumed run goes on with.
struct ResumePoint {
  int epoch = 0;                // the epoch to go on with (0-based)
  long long step_in_epoch = 0;  // its first step still to run
  long long global_step = 0;    // optimizer steps taken so far
  int adam_step = 0;            // the host's copy of Adam's step count
  bool operator==(const ResumePoint&) const = default;
};

struct SnapshotMeta {
  // The run that wrote it. A resumed run must have the same model, optimizer
  // and global batch (restore_snapshot); another world size is a
  // warning. The rest is for the record: a resumed run takes its options.
  std::string model;      // ModelSpec::describe()
  std::string optimizer;  // sgd | adam | adadelta | adamw
  float lr = 0;           // written with six decimals (std::to_string)
  int batch_size = 0;     // global
  int accum_steps = 1;
  int world_size = 1;
  ResumePoint position;
  // The sampler's generator is reseeded with seed + epoch every epoch and
  // nothing else draws random numbers after the initialisation, so seed and
  // position are the whole RNG state.
  std::uint64_t sampler_seed = 0;
  bool shuffle = true;
  std::string data;  // Dataset::origin
  bool operator==(const SnapshotMeta&) const = default;
};

std::map<std::string, std::string> to_meta(const SnapshotMeta& meta);

// Every field of format 1, present and well formed; numbers whole and in
// their type's range (epoch + 1 too: it is the epoch's number in messages).
// Errors name `path` (the snapshot's file), the field and the fix.
Result<SnapshotMeta> from_meta(const std::map<std::string, std::string>& meta, const std::string& path);

}  // namespace ddp::train
