// Where a resumed run starts: a snapshot's metadata written and read back
// strictly (every error names the file, the field and the fix), the resume
// point's copy in the bootstrap store that rank 0 sends the other ranks, and
// the training state saved and restored by name, from this format and from
// format 1 (what an older ddp-train wrote).
#include <stdlib.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/ops.hpp"
#include "train/resume.hpp"
#include "train/snapshot.hpp"
#include "train/snapshot_meta.hpp"
#include "train/snapshot_state.hpp"
// Last: check.h defines a macro `fail`, which ddp/base/result.hpp declares as a function.
#include "suites.hpp"

using namespace ddp::train;

namespace {

const std::string kPath = "/snaps/snapshot-000000000035.ddps";

SnapshotMeta sample_meta() {
  return SnapshotMeta{.model = "mlp 784-256-128-10 (cross-entropy)",
                      .optimizer = "sgd",
                      .lr = 0.05f,
                      .batch_size = 128,
                      .accum_steps = 2,
                      .world_size = 4,
                      .position = {2, 3, 35, 35},
                      .sampler_seed = 18446744073709551615ULL,
                      .shuffle = false,
                      .data = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"};
}

// A valid snapshot's metadata with the resume point's four fields as given.
std::map<std::string, std::string> meta_at(const std::string& epoch, const std::string& step_in_epoch,
                                           const std::string& global_step, const std::string& adam_step) {
  auto meta = to_meta(sample_meta());
  meta["epoch"] = epoch;
  meta["step_in_epoch"] = step_in_epoch;
  meta["global_step"] = global_step;
  meta["adam_step"] = adam_step;
  return meta;
}

// A snapshot file as ddp-train wrote it in format 1, byte by byte, written
// here independently of encode_snapshot(): "DDPSNAP1", the total length, the
// metadata's "key=value\n" lines, the arrays without names (parameters,
// then the optimizer's state), the CRC-32, "DDPSEND1". Little-endian.
std::vector<char> format_1_bytes(const std::map<std::string, std::string>& meta,
                                 const std::vector<std::vector<float>>& arrays) {
  std::vector<char> out;
  const auto put = [&out](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
  };
  for (char c : std::string("DDPSNAP1")) out.push_back(c);
  put(0, 8);
  std::string text;
  for (const auto& [k, v] : meta) text += k + "=" + v + "\n";
  put(text.size(), 4);
  out.insert(out.end(), text.begin(), text.end());
  put(arrays.size(), 4);
  for (const auto& a : arrays) {
    put(a.size(), 8);
    for (float f : a) {
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put(bits, 4);
    }
  }
  const std::uint64_t total = out.size() + 4 + 8;
  for (int i = 0; i < 8; ++i) out[8 + std::size_t(i)] = char((total >> (8 * i)) & 0xff);
  put(crc32(0L, reinterpret_cast<const Bytef*>(out.data()), uInt(out.size())), 4);
  for (char c : std::string("DDPSEND1")) out.push_back(c);
  return out;
}

std::string snapshot_dir_with(const std::vector<char>& bytes, long long step) {
  char tmpl[] = "/tmp/ddp-unit-snap-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  std::ofstream(std::string(tmpl) + "/" + snapshot_file_name(std::uint64_t(step)), std::ios::binary)
      .write(bytes.data(), std::streamsize(bytes.size()));
  return tmpl;
}

// A run of an MLP with Adam on 4 parameters, and its state in ops memory.
struct AdamRun {
  std::unique_ptr<Ops> ops = make_cpu_ops(1);
  std::vector<float> params = std::vector<float>(4), m = std::vector<float>(4), v = std::vector<float>(4);
  SnapshotMeta meta = SnapshotMeta{.model = "mlp 3-1 (cross-entropy)",
                                   .optimizer = "adam",
                                   .lr = 0.001f,
                                   .batch_size = 32,
                                   .accum_steps = 1,
                                   .world_size = 2,
                                   .position = {1, 2, 7, 7},
                                   .sampler_seed = 5,
                                   .shuffle = true,
                                   .data = "synthetic"};
  TrainState state() { return train_state(4, params.data(), "adam", m.data(), v.data()); }
};

}  // namespace

START_TEST(format_1_snapshot_restores_its_arrays_by_their_place) {
  AdamRun run;
  const std::vector<std::vector<float>> saved = {{1, 2, 3, 4}, {0.1f, 0.2f, 0.3f, 0.4f}, {5, 6, 7, 8}};
  const std::vector<char> bytes = format_1_bytes(to_meta(run.meta), saved);
  // The format-1 writer still writes exactly these bytes (a decoded old file re-encodes as it was).
  Snapshot old{.format = 1, .meta = to_meta(run.meta), .arrays = {{"", saved[0]}, {"", saved[1]}, {"", saved[2]}}};
  ck_assert(encode_snapshot(old) == bytes);
  const std::string dir = snapshot_dir_with(bytes, 7);
  auto restored = restore_snapshot(dir, run.meta, *run.ops, run.state());
  ck_assert_msg(restored.ok(), "%s", restored.ok() ? "" : restored.error().c_str());
  ck_assert(restored->has_value() && (*restored)->meta.position == run.meta.position);
  ck_assert(run.params == saved[0] && run.m == saved[1] && run.v == saved[2]);
  // Format 1 with SGD: the parameters and the velocity.
  run.meta.optimizer = "sgd";
  std::filesystem::remove_all(dir);
  const std::string sgd_dir = snapshot_dir_with(format_1_bytes(to_meta(run.meta), {{9, 9, 9, 9}, {1, 1, 1, 1}}), 7);
  std::vector<float> p(4), velocity(4);
  auto sgd = restore_snapshot(sgd_dir, run.meta, *run.ops, train_state(4, p.data(), "sgd", velocity.data(), nullptr));
  ck_assert_msg(sgd.ok(), "%s", sgd.ok() ? "" : sgd.error().c_str());
  ck_assert(p == std::vector<float>(4, 9.0f) && velocity == std::vector<float>(4, 1.0f));
  std::filesystem::remove_all(sgd_dir);
}
END_TEST

START_TEST(snapshot_saves_and_restores_by_name) {
  AdamRun run;
  run.params = {1, 2, 3, 4};
  run.m = {-1, -2, -3, -4};
  run.v = {10, 20, 30, 40};
  char tmpl[] = "/tmp/ddp-unit-snap-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  const std::string dir = tmpl;
  save_snapshot(SnapshotTarget{dir, 3}, *run.ops, run.state(), run.meta, "test");
  auto scan = find_newest_snapshot(dir);
  ck_assert(scan.ok() && scan->newest && scan->newest->snapshot.format == kSnapshotFormat);
  CK_STR_EQ(scan->newest->snapshot.arrays[2].name, "adam_v");
  // Restored by name, whatever the order this run lists its arrays in.
  AdamRun back;
  TrainState state = back.state();
  std::swap(state.arrays[0], state.arrays[2]);
  auto restored = restore_snapshot(dir, back.meta, *back.ops, state);
  ck_assert_msg(restored.ok(), "%s", restored.ok() ? "" : restored.error().c_str());
  ck_assert(back.params == run.params && back.m == run.m && back.v == run.v);
  std::filesystem::remove_all(dir);
}
END_TEST

START_TEST(snapshot_restore_names_the_array_that_does_not_fit) {
  AdamRun run;
  const auto refused = [&run](const Snapshot& snap, const std::string& why) {
    const std::string dir = snapshot_dir_with(encode_snapshot(snap), 7);
    auto restored = restore_snapshot(dir, run.meta, *run.ops, run.state());
    ck_assert_msg(!restored.ok(), "accepted; expected: %s", why.c_str());
    CK_CONTAINS(restored.error(), dir + "/" + snapshot_file_name(7));
    CK_CONTAINS(restored.error(), why);
    CK_CONTAINS(restored.error(), "--no-resume");
    std::filesystem::remove_all(dir);
  };
  const std::vector<float> four(4, 1.0f);
  Snapshot snap{.meta = to_meta(run.meta), .arrays = {{"parameters", four}, {"adam_m", four}}};
  refused(snap, "the snapshot has no 'adam_v' array (it holds adam_m, parameters; this run needs parameters, "
                "adam_m, adam_v)");
  snap.arrays.push_back({"adam_v", {1.0f, 2.0f}});
  refused(snap, "its 'adam_v' array holds 2 floats, this model's 4");
  snap.arrays.back().values = four;
  snap.arrays.push_back({"sgd_velocity", four});
  refused(snap, "the snapshot's 'sgd_velocity' array is not part of this run's state");
  Snapshot old{.format = 1, .meta = to_meta(run.meta), .arrays = {{"", four}, {"", four}}};
  refused(old, "a format-1 snapshot of a run with adam holds 3 arrays (parameters, adam_m, adam_v), this one 2");
}
END_TEST

START_TEST(snapshot_meta_round_trips) {
  const SnapshotMeta meta = sample_meta();
  const auto written = to_meta(meta);
  ck_assert_uint_eq(written.size(), 14);
  CK_STR_EQ(written.at("format"), "1");
  CK_STR_EQ(written.at("lr"), "0.050000");
  CK_STR_EQ(written.at("shuffle"), "0");
  auto back = from_meta(written, kPath);
  ck_assert_msg(back.ok(), "%s", back.ok() ? "" : back.error().c_str());
  ck_assert(*back == meta);
}
END_TEST

START_TEST(resume_point_reads_every_field) {
  auto p = from_meta(meta_at("2", "3", "35", "35"), kPath);
  ck_assert_msg(p.ok(), "%s", p.ok() ? "" : p.error().c_str());
  ck_assert(p->position == (ResumePoint{2, 3, 35, 35}));
  auto big = from_meta(meta_at("2147483646", "9223372036854775807", "9223372036854775807", "2147483647"), kPath);
  ck_assert(big.ok());
  ck_assert_int_eq(big->position.epoch, 2147483646);
  ck_assert(big->position.global_step == 9223372036854775807LL);
  ck_assert_int_eq(big->position.adam_step, 2147483647);
}
END_TEST

START_TEST(snapshot_meta_missing_field_names_file_field_and_fix) {
  for (const auto& [field, value] : to_meta(sample_meta())) {
    auto meta = to_meta(sample_meta());
    meta.erase(field);
    auto p = from_meta(meta, kPath);
    ck_assert_msg(!p.ok(), "a snapshot without '%s' was accepted", field.c_str());
    CK_CONTAINS(p.error(), kPath + ": the snapshot has no '" + field + "' field");
    CK_CONTAINS(p.error(), "--no-resume");
    CK_CONTAINS(p.error(), "move it out of the --snapshot-dir");
  }
}
END_TEST

START_TEST(resume_point_rejects_malformed_numbers) {
  for (const char* text : {"", "3x", "-1", "+3", " 3", "3.0", "0x10"}) {
    auto p = from_meta(meta_at("1", text, "16", "16"), kPath);
    ck_assert_msg(!p.ok(), "step_in_epoch='%s' accepted", text);
    CK_CONTAINS(p.error(), kPath + ": snapshot field step_in_epoch='" + text + "' is not a whole number");
    CK_CONTAINS(p.error(), "--no-resume");
  }
}
END_TEST

START_TEST(snapshot_meta_rejects_garbled_fields) {
  const auto refused = [](const std::string& field, const std::string& value, const std::string& why) {
    auto meta = to_meta(sample_meta());
    meta[field] = value;
    auto p = from_meta(meta, kPath);
    ck_assert_msg(!p.ok(), "%s='%s' accepted", field.c_str(), value.c_str());
    CK_CONTAINS(p.error(), kPath + ": snapshot field " + field);
    CK_CONTAINS(p.error(), why);
    CK_CONTAINS(p.error(), "move it out of the --snapshot-dir");
  };
  refused("format", "2", "format=2 is not 1");
  refused("lr", "fast", "lr='fast' is not a decimal number");
  refused("lr", "nan", "is not a decimal number");
  refused("lr", "-0.1", "is not a decimal number");
  refused("batch_size", "0", "batch_size=0 is out of range");
  refused("world_size", "two", "world_size='two' is not a whole number");
  refused("shuffle", "2", "shuffle=2 is out of range");
  refused("sampler_seed", "18446744073709551616", "sampler_seed=18446744073709551616 is out of range");
}
END_TEST

START_TEST(resume_point_rejects_numbers_out_of_range) {
  auto epoch = from_meta(meta_at("2147483647", "0", "16", "16"), kPath);  // epoch + 1 must fit an int
  ck_assert(!epoch.ok());
  CK_CONTAINS(epoch.error(), kPath + ": snapshot field epoch=2147483647 is out of range; use a number between 0 and "
                                     "2147483646");
  auto adam = from_meta(meta_at("1", "0", "16", "2147483648"), kPath);
  ck_assert(!adam.ok());
  CK_CONTAINS(adam.error(), "adam_step=2147483648 is out of range");
  auto global = from_meta(meta_at("1", "0", "9223372036854775808", "16"), kPath);
  ck_assert(!global.ok());
  CK_CONTAINS(global.error(), "global_step=9223372036854775808 is out of range");
  auto huge = from_meta(meta_at("1", "0", "16", "99999999999999999999999"), kPath);
  ck_assert(!huge.ok());
  CK_CONTAINS(huge.error(), "is out of range");
}
END_TEST

START_TEST(resume_point_travels_between_ranks_as_numbers) {
  const ResumePoint point{2, 3, 9223372036854775807LL, 35};
  const std::vector<char> bytes = encode_resume_point(point);
  ck_assert_uint_eq(bytes.size(), 32);
  auto back = decode_resume_point(bytes);
  ck_assert(back.ok() && back->has_value() && **back == point);
  auto none = decode_resume_point(encode_resume_point(std::nullopt));
  ck_assert(none.ok() && !none->has_value());
  auto cut = decode_resume_point(std::vector<char>(bytes.begin(), bytes.end() - 1));
  ck_assert(!cut.ok());
  CK_CONTAINS(cut.error(), "resume point of 31 bytes, not 32");
}
END_TEST

Suite* trainer_resume_suite() {
  return make_suite("trainer_resume",
                    {snapshot_meta_round_trips, resume_point_reads_every_field,
                     snapshot_meta_missing_field_names_file_field_and_fix, resume_point_rejects_malformed_numbers,
                     snapshot_meta_rejects_garbled_fields, resume_point_rejects_numbers_out_of_range,
                     resume_point_travels_between_ranks_as_numbers, format_1_snapshot_restores_its_arrays_by_their_place,
                     snapshot_saves_and_restores_by_name, snapshot_restore_names_the_array_that_does_not_fit});
}
