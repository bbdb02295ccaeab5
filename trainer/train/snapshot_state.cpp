#include "train/snapshot_state.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

namespace ddp::train {
namespace {

using Clock = std::chrono::steady_clock;

const char* stage_of(CrashPoint crash) { return crash == CrashPoint::before_rename ? "rename" : "write"; }

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// The way out of every refusal below.
std::string way_out() { return "use another --snapshot-dir, or --no-resume to start over"; }

// A snapshot resumes only a run of the same model, optimizer and global batch.
Status check_same_run(const SnapshotMeta& meta, const SnapshotMeta& run, const std::string& path) {
  if (meta.model == run.model && meta.optimizer == run.optimizer && meta.batch_size == run.batch_size) return Ok{};
  return fail(path + " was written by a run of " + meta.model + " / " + meta.optimizer + " / global batch " +
              std::to_string(meta.batch_size) + ", not " + run.model + " / " + run.optimizer + " / global batch " +
              std::to_string(run.batch_size) + ": " + way_out());
}

// The snapshot's arrays by name. Format 1 names none: it held the parameters
// and then the optimizer's state, in optimizer_state_names()'s order.
Result<std::map<std::string, const std::vector<float>*>> arrays_by_name(const Snapshot& snap,
                                                                       const std::string& optimizer,
                                                                       const std::string& path) {
  std::vector<std::string> format_1_names = {"parameters"};
  for (const std::string& n : optimizer_state_names(optimizer)) format_1_names.push_back(n);
  if (snap.format == 1 && snap.arrays.size() != format_1_names.size())
    return fail(path + ": a format-1 snapshot of a run with " + optimizer + " holds " +
                std::to_string(format_1_names.size()) + " arrays (" + joined(format_1_names) + "), this one " +
                std::to_string(snap.arrays.size()) + ": " + way_out());
  std::map<std::string, const std::vector<float>*> by_name;
  for (std::size_t i = 0; i < snap.arrays.size(); ++i)
    by_name[snap.format == 1 ? format_1_names[i] : snap.arrays[i].name] = &snap.arrays[i].values;
  return by_name;
}

// Every array of `state` from the one of its name, each checked before any is
// loaded; an array of the snapshot that `state` lacks is refused too.
Status load_arrays(const std::map<std::string, const std::vector<float>*>& saved, const TrainState& state,
                   const std::string& path, Ops& ops) {
  std::vector<std::string> held, wanted;
  for (const auto& [name, values] : saved) held.push_back(name);
  for (const StateArray& a : state.arrays) wanted.push_back(a.name);
  for (const StateArray& a : state.arrays) {
    const auto it = saved.find(a.name);
    if (it == saved.end())
      return fail(path + ": the snapshot has no '" + a.name + "' array (it holds " + joined(held) + "; this run needs " +
                  joined(wanted) + "): " + way_out());
    if (it->second->size() != state.count)
      return fail(path + ": its '" + a.name + "' array holds " + std::to_string(it->second->size()) +
                  " floats, this model's " + std::to_string(state.count) + ": " + way_out());
  }
  for (const std::string& name : held)
    if (std::find(wanted.begin(), wanted.end(), name) == wanted.end())
      return fail(path + ": the snapshot's '" + name + "' array is not part of this run's state (" + joined(wanted) +
                  "): " + way_out());
  for (const StateArray& a : state.arrays) ops.upload(a.data, saved.at(a.name)->data(), state.count);
  return Ok{};
}

}  // namespace

std::vector<std::string> optimizer_state_names(const std::string& optimizer) {
  if (optimizer == "sgd") return {"sgd_velocity"};
  if (optimizer == "adadelta") return {"adadelta_square_avg", "adadelta_acc_delta"};
  return {"adam_m", "adam_v"};  // adam, adamw
}

TrainState train_state(std::size_t count, float* parameters, const std::string& optimizer, float* first,
                       float* second) {
  TrainState state{count, {{"parameters", parameters}}};
  float* const buffers[2] = {first, second};
  const std::vector<std::string> names = optimizer_state_names(optimizer);
  for (std::size_t i = 0; i < names.size(); ++i) state.arrays.push_back({names[i], buffers[i]});
  return state;
}

void save_snapshot(const SnapshotTarget& target, Ops& ops, const TrainState& state, const SnapshotMeta& meta,
                   const char* why) {
  const auto t0 = Clock::now();
  Snapshot snap;
  snap.meta = to_meta(meta);
  for (const StateArray& a : state.arrays) {
    SnapshotArray saved{a.name, std::vector<float>(state.count)};
    ops.download(saved.values.data(), a.data, state.count);
    snap.arrays.push_back(std::move(saved));
  }
  const std::string name = snapshot_file_name(std::uint64_t(meta.position.global_step));
  if (target.crash != CrashPoint::none)
    std::fprintf(stderr, "ddp-train: fault injection: rank 0 is killed while writing %s (%s)\n", name.c_str(),
                 stage_of(target.crash));
  if (auto st = write_file_durably(target.dir, name, encode_snapshot(snap), target.crash); !st) {
    spdlog::warn("warning: snapshot not saved: {}", st.error());
    return;
  }
  (void)prune_snapshots(target.dir, target.keep);
  spdlog::info("saved {}/{} ({}, {:.2f} s)", target.dir, name, why,
               std::chrono::duration<double>(Clock::now() - t0).count());
}

Result<std::optional<RestoredSnapshot>> restore_snapshot(const std::string& dir, const SnapshotMeta& run, Ops& ops,
                                                         const TrainState& state) {
  auto scan = find_newest_snapshot(dir);
  if (!scan) return fail(scan.error());
  for (const std::string& w : scan->warnings) spdlog::warn("warning: {}", w);
  if (!scan->newest) return std::optional<RestoredSnapshot>();
  const Snapshot& snap = scan->newest->snapshot;
  const std::string& path = scan->newest->path;
  auto meta = from_meta(snap.meta, path);
  if (!meta) return fail(meta.error());
  if (Status same = check_same_run(*meta, run, path); !same) return fail(same.error());
  auto saved = arrays_by_name(snap, meta->optimizer, path);
  if (!saved) return fail(saved.error());
  if (Status loaded = load_arrays(*saved, state, path, ops); !loaded) return fail(loaded.error());
  if (meta->world_size != run.world_size)
    spdlog::warn("warning: {} was written with {} ranks, this run has {}: the order of samples within the "
                 "epoch changes, the global batch does not",
                 path, meta->world_size, run.world_size);
  return std::optional<RestoredSnapshot>(RestoredSnapshot{path, *meta});
}

}  // namespace ddp::train
