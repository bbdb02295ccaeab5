// The snapshot file: training state that survives crashes. Only rank 0
// writes (the state is replicated); every rank resumes from what rank 0 reads
// and broadcasts. What goes into one, and how it is read back into a run, is
// train/snapshot_state.hpp's.
//
// One self-checking file per snapshot, snapshot-<global step>.ddps, format 2:
//   "DDPSNAP2" | u64 total length | u32 metadata length | metadata (key=value
//   lines) | u32 array count | per array: u32 name length, name, u64 float
//   count, floats | u32 CRC-32 of everything before it | "DDPSEND1"
// Format 1 ("DDPSNAP1") is the same without the arrays' names; it is still
// read (a snapshot written by an older ddp-train resumes), its arrays named
// by snapshot_state.cpp from their order.
// Written as a hidden temporary, fsync'd, renamed into place, then the
// directory fsync'd: the rename is the commit point, so a crash at any moment
// leaves either the old set of snapshots or the old set plus one complete new
// one. Readers check length, magic and CRC, and fall back to an older file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

// The format this ddp-train writes, and the oldest it reads.
constexpr int kSnapshotFormat = 2;
constexpr int kOldestSnapshotFormat = 1;

struct SnapshotArray {
  std::string name;  // unique in its snapshot; empty in format 1, which names none
  std::vector<float> values;
  bool operator==(const SnapshotArray&) const = default;
};

struct Snapshot {
  int format = kSnapshotFormat;
  std::map<std::string, std::string> meta;  // key=value: the trainer's in snapshot_meta.hpp
  std::vector<SnapshotArray> arrays;
};

// In `snapshot.format`: a format 1 file is what an older ddp-train wrote (the
// tests write one, and a decoded one encodes to the same bytes).
std::vector<char> encode_snapshot(const Snapshot& snapshot);
// Either format. `origin` names the file in errors ("truncated: 1234 of 5678
// bytes", ...).
Result<Snapshot> decode_snapshot(const std::vector<char>& bytes, const std::string& origin);

std::string snapshot_file_name(std::uint64_t global_step);

// Testing only: where write_file_durably SIGKILLs its own process, to prove
// that no interruption costs the previous snapshot.
enum class CrashPoint { none, half_written, before_rename };

// Durable write of `bytes` as dir/name (temporary, fsync, rename, fsync dir).
Status write_file_durably(const std::string& dir, const std::string& name, const std::vector<char>& bytes,
                          CrashPoint crash = CrashPoint::none);

struct LoadedSnapshot {
  Snapshot snapshot;
  std::string path;
};
struct SnapshotScan {
  std::optional<LoadedSnapshot> newest;  // the newest file that decodes cleanly
  std::vector<std::string> warnings;     // one per skipped file, naming it and why
};
// Looks through `dir` (missing = no snapshots) newest first.
Result<SnapshotScan> find_newest_snapshot(const std::string& dir);

// Keeps the newest `keep` snapshots, deletes older ones and stale temporaries.
Status prune_snapshots(const std::string& dir, int keep);

}  // namespace ddp::train
