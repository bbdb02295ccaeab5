// Where a resumed run starts: the four numbers read strictly from a
// snapshot's metadata (every error names the file, the field and the fix),
// and their copy in the bootstrap store that rank 0 sends the other ranks.
#include <string>

#include "train/resume.hpp"
// Last: check.h defines a macro `fail`, which ddp/result.hpp declares as a function.
#include "suites.hpp"

using namespace ddp::train;

namespace {

const std::string kPath = "/snaps/snapshot-000000000035.ddps";

Snapshot snapshot_at(const std::string& epoch, const std::string& step_in_epoch, const std::string& global_step,
                     const std::string& adam_step) {
  Snapshot s;
  s.meta = {{"format", "1"},           {"model", "mlp 784-256-128-10 (cross-entropy)"},
            {"epoch", epoch},          {"step_in_epoch", step_in_epoch},
            {"global_step", global_step}, {"adam_step", adam_step}};
  return s;
}

}  // namespace

START_TEST(resume_point_reads_every_field) {
  auto p = read_resume_point(snapshot_at("2", "3", "35", "35"), kPath);
  ck_assert_msg(p.ok(), "%s", p.ok() ? "" : p.error().c_str());
  ck_assert(*p == (ResumePoint{2, 3, 35, 35}));
  auto big = read_resume_point(snapshot_at("2147483646", "9223372036854775807", "9223372036854775807", "2147483647"),
                               kPath);
  ck_assert(big.ok());
  ck_assert_int_eq(big->epoch, 2147483646);
  ck_assert(big->global_step == 9223372036854775807LL);
  ck_assert_int_eq(big->adam_step, 2147483647);
}
END_TEST

START_TEST(resume_point_missing_field_names_file_field_and_fix) {
  for (const char* field : {"epoch", "step_in_epoch", "global_step", "adam_step"}) {
    Snapshot s = snapshot_at("1", "0", "16", "16");
    s.meta.erase(field);
    auto p = read_resume_point(s, kPath);
    ck_assert(!p.ok());
    CK_CONTAINS(p.error(), kPath + ": the snapshot has no '" + field + "' field");
    CK_CONTAINS(p.error(), "--no-resume");
    CK_CONTAINS(p.error(), "move it out of the --snapshot-dir");
  }
}
END_TEST

START_TEST(resume_point_rejects_malformed_numbers) {
  for (const char* text : {"", "3x", "-1", "+3", " 3", "3.0", "0x10"}) {
    auto p = read_resume_point(snapshot_at("1", text, "16", "16"), kPath);
    ck_assert_msg(!p.ok(), "step_in_epoch='%s' accepted", text);
    CK_CONTAINS(p.error(), kPath + ": snapshot field step_in_epoch='" + text + "' is not a whole number");
    CK_CONTAINS(p.error(), "--no-resume");
  }
}
END_TEST

START_TEST(resume_point_rejects_numbers_out_of_range) {
  auto epoch = read_resume_point(snapshot_at("2147483647", "0", "16", "16"), kPath);  // epoch + 1 must fit an int
  ck_assert(!epoch.ok());
  CK_CONTAINS(epoch.error(), kPath + ": snapshot field epoch=2147483647 is out of range; use a number between 0 and "
                                     "2147483646");
  auto adam = read_resume_point(snapshot_at("1", "0", "16", "2147483648"), kPath);
  ck_assert(!adam.ok());
  CK_CONTAINS(adam.error(), "adam_step=2147483648 is out of range");
  auto global = read_resume_point(snapshot_at("1", "0", "9223372036854775808", "16"), kPath);
  ck_assert(!global.ok());
  CK_CONTAINS(global.error(), "global_step=9223372036854775808 is out of range");
  auto huge = read_resume_point(snapshot_at("1", "0", "16", "99999999999999999999999"), kPath);
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
                    {resume_point_reads_every_field, resume_point_missing_field_names_file_field_and_fix,
                     resume_point_rejects_malformed_numbers, resume_point_rejects_numbers_out_of_range,
                     resume_point_travels_between_ranks_as_numbers});
}
