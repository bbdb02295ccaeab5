// Where a resumed run starts: a snapshot's metadata written and read back
// strictly (every error names the file, the field and the fix), and the
// resume point's copy in the bootstrap store that rank 0 sends the other
// ranks.
#include <string>

#include "train/resume.hpp"
#include "train/snapshot_meta.hpp"
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

}  // namespace

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
                     resume_point_travels_between_ranks_as_numbers});
}
