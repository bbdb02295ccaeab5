// The training state in a snapshot, saved and restored side by side: every
// array under its name ("parameters", "adam_m", ...), restored by that name,
// with the run's metadata (snapshot_meta.hpp) beside it. The file itself
// (format, crash-safe write, newest complete file) is snapshot.hpp's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "model/ops.hpp"
#include "train/snapshot.hpp"
#include "train/snapshot_meta.hpp"

namespace ddp::train {

// One array of the training state in ops memory, and the name a snapshot
// keeps it under.
struct StateArray {
  std::string name;
  float* data = nullptr;
};

// The parameters and the optimizer's state: `count` floats each.
struct TrainState {
  std::size_t count = 0;
  std::vector<StateArray> arrays;  // "parameters" first
};

// The optimizer's state arrays by name: sgd "sgd_velocity"; adam and adamw
// "adam_m", "adam_v" (the moments); adadelta "adadelta_square_avg",
// "adadelta_acc_delta" (the means of g^2 and of the squared updates).
std::vector<std::string> optimizer_state_names(const std::string& optimizer);
// The state of a run with `optimizer`: the parameters, then `first` and
// `second` under that optimizer's names (`second` unused by sgd).
TrainState train_state(std::size_t count, float* parameters, const std::string& optimizer, float* first,
                       float* second);

// Where rank 0 saves: --snapshot-dir, --keep, and the tests' injected crash.
struct SnapshotTarget {
  std::string dir;
  int keep = 3;
  CrashPoint crash = CrashPoint::none;
};

// Saves `state` and `meta` as dir/snapshot-<global step>.ddps (the step in
// `meta`), durably, and keeps the newest `keep`; logs "saved ..." with `why`.
// A failed save is a warning: training goes on, and the older snapshots stay.
void save_snapshot(const SnapshotTarget& target, Ops& ops, const TrainState& state, const SnapshotMeta& meta,
                   const char* why);

struct RestoredSnapshot {
  std::string path;
  SnapshotMeta meta;  // meta.position: where the run goes on
};
// Loads the newest complete snapshot in `dir` into `state`, each array by its
// name, once its metadata shows that a run like `run` wrote it (the same
// model, optimizer and global batch; another world size is a warning).
// Nothing when `dir` holds none. Errors name the file, what does not fit and
// the way out.
Result<std::optional<RestoredSnapshot>> restore_snapshot(const std::string& dir, const SnapshotMeta& run, Ops& ops,
                                                         const TrainState& state);

}  // namespace ddp::train
