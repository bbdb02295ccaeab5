// ddp-check-config's rules (spank/config_check.cpp), on values.
#include "config_check.hpp"

#include "suites.hpp"

using namespace ddp;
using spank::Finding;
using spank::PlugstackLine;

namespace {

PlugstackLine line(const std::string& text, const std::string& where) {
  auto parsed = spank::parse_plugstack_line(text, where);
  ck_assert_msg(parsed.ok() && parsed->has_value(), "%s", parsed.ok() ? "blank" : parsed.error().c_str());
  return **parsed;
}

const auto exists = [](const std::string& path) { return path.starts_with("/usr/lib/"); };
const std::string kPackageDir = "/usr/lib/slurm-ddp/plugstack.d";
const std::string kPackageLine = kPackageDir + "/spank_ddp.conf:10";

}  // namespace

START_TEST(plugstack_lines_read_as_slurm_reads_them) {
  ck_assert(!spank::parse_plugstack_line("  # only a comment", "f:1")->has_value());
  const auto l = line("required /usr/lib/x/spank_ddp.so config=/etc/ddp.conf # note", "f:2");
  ck_assert(l.kind == PlugstackLine::Kind::Required);
  ck_assert_str_eq(l.path.c_str(), "/usr/lib/x/spank_ddp.so");
  ck_assert_uint_eq(l.args.size(), 1);
  ck_assert(line("include /etc/slurm/plugstack.conf.d/*.conf", "f:3").kind == PlugstackLine::Kind::Include);
  CK_CONTAINS(spank::parse_plugstack_line("requird /x.so", "f:4").error(), "f:4: 'requird' is neither");
  CK_CONTAINS(spank::parse_plugstack_line("required", "f:5").error(), "required without a path");
}
END_TEST

START_TEST(the_package_line_alone_is_clean) {
  ck_assert(spank::check_plugstack({line("required /usr/lib/x/spank_ddp.so", kPackageLine)}, exists, kPackageDir)
                .empty());
}
END_TEST

START_TEST(plugstack_problems_name_the_line_and_the_fix) {
  using Level = Finding::Level;
  // The plugin gone, its required line kept: what `apt remove` leaves of a
  // package whose drop-in names the plugin itself (the older release's).
  const auto gone = spank::check_plugstack({line("required /opt/spank_ddp.so", kPackageLine)}, exists, kPackageDir);
  ck_assert_uint_eq(gone.size(), 1);
  ck_assert(gone[0].level == Level::Error);
  CK_CONTAINS(gone[0].text, "/opt/spank_ddp.so does not exist: slurmd will not start");
  // A line of the admin's own survives removal of the package: said, not an error.
  const auto own = spank::check_plugstack({line("required /usr/lib/x/spank_ddp.so", "/etc/slurm/plugstack.conf:3")},
                                          exists, kPackageDir);
  ck_assert_uint_eq(own.size(), 1);
  ck_assert(own[0].level == Level::Warning);
  CK_CONTAINS(own[0].text, "after `apt remove slurm-ddp` slurmd would not start; include " + kPackageDir + "/*.conf");
  // Twice, optional, bad arguments.
  const auto many = spank::check_plugstack({line("required /usr/lib/x/spank_ddp.so", kPackageLine),
                                            line("optional /usr/lib/x/spank_ddp.so PortRange=9-1", kPackageLine)},
                                           exists, kPackageDir);
  ck_assert_uint_eq(many.size(), 3);
  CK_CONTAINS(many[0].text, "loaded a second time (first at " + kPackageLine + ")");
  CK_CONTAINS(many[1].text, "optional: Slurm ignores the plugin's errors");
  CK_CONTAINS(many[2].text, "PortRange");
  const auto none = spank::check_plugstack({line("required /usr/lib/x/other.so", kPackageLine)}, exists, kPackageDir);
  ck_assert_uint_eq(none.size(), 1);
  CK_CONTAINS(none[0].text, "no plugstack line loads spank_ddp.so");
}
END_TEST

START_TEST(site_config_names_checked_against_slurm) {
  const auto config = parse_site_config(
      "PortRange=21000-21999\nPartitionName=gpu,gpu-old Enabled=no\nNodeName=gpu[001-002] BindCpus=no\n"
      "NodeName=cpu[9] BindCpus=no\n",
      "ddp.conf");
  ck_assert(config.ok());
  spank::SlurmView view{{{"gpu", "gpu[001-004]"}, {"debug", "cpu[1-2]"}}, {"gpu001", "gpu002", "cpu1", "cpu2"}};
  const auto matcher = [](const std::string& nodes, const std::string& node) {
    return nodes == "gpu[001-002]" && node.starts_with("gpu");
  };
  const auto found = spank::check_names(*config, view, matcher);
  ck_assert_uint_eq(found.size(), 2);
  ck_assert_str_eq(found[0].where.c_str(), "ddp.conf:2");
  CK_CONTAINS(found[0].text, "PartitionName=gpu-old: Slurm has no partition of that name (it has: gpu, debug)");
  ck_assert_str_eq(found[1].where.c_str(), "ddp.conf:4");
  CK_CONTAINS(found[1].text, "NodeName=cpu[9] matches no node Slurm has");
  const auto off = resolve_settings(*config, "gpu", "gpu001", matcher);
  const std::string shown = spank::describe_partition("gpu", off);
  ck_assert_str_eq(shown.c_str(), "partition gpu: --ddp off (Enabled=no, ddp.conf:2)");
  CK_CONTAINS(spank::describe_partition("debug", resolve_settings(*config, "debug", "cpu1", matcher)),
              "partition debug: --ddp on; PortRange=21000-21999");
  CK_CONTAINS(spank::describe_partition("debug", resolve_settings(*config, "debug", "cpu1", matcher)),
              " Requeue=no JobComment=yes");
  auto no_comment = resolve_settings(*config, "debug", "cpu1", matcher);
  no_comment.job_comment = false;
  CK_CONTAINS(spank::describe_partition("debug", no_comment), " JobComment=no");
}
END_TEST

Suite* config_check_suite() {
  return make_suite("config_check", {plugstack_lines_read_as_slurm_reads_them, the_package_line_alone_is_clean,
                                     plugstack_problems_name_the_line_and_the_fix,
                                     site_config_names_checked_against_slurm});
}
