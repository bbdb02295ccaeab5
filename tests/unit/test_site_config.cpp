#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ddp/base/bounds.hpp"
#include "ddp/site/site_config.hpp"

#include "hostlist.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {

// The plugin's hostlist code, on Slurm's own (libslurm here, Slurm's process inside Slurm).
bool slurm_match(const std::string& nodes, const std::string& node) { return spank::hostlist_contains(nodes, node); }

SiteConfig parse_ok(const std::string& text) {
  auto c = parse_site_config(text, "ddp.conf");
  ck_assert_msg(c.ok(), "%s", c.ok() ? "" : c.error().c_str());
  return std::move(c).value();
}

std::string env_of(const Settings& s, const std::string& name) {
  for (const auto& e : s.env)
    if (e.name == name) return e.value + (e.forced ? " (forced)" : "");
  return "<unset>";
}

}  // namespace

START_TEST(empty_config_gives_defaults) {
  const auto s = resolve_settings(parse_ok("# nothing\n\n"), "debug", "n0", slurm_match);
  ck_assert(s == Settings{});
  ck_assert_uint_eq(s.port_range.first, 20000);
  ck_assert(s.bind_cpus);
  ck_assert(!s.export_ib_hca);
}
END_TEST

START_TEST(slurm_style_words_keys_case_insensitive) {
  const auto c = parse_ok(
      "Agent=/opt/ddp/bin/ddp-agent portrange=21000-21999   # comment\n"
      "RendezvousTimeout=90 HeartbeatTimeout=3 STOPGRACE=12 BindCpus=no ExportIbHca=yes TopologyFile=/etc/ddp/node.xml "
      "GpuInfoDir=/x/gpus MasterInterface=ib0\r\n"
      "Env=NCCL_DEBUG=WARN ForceEnv=NCCL_NET=IB Env=\"NCCL_DEBUG_SUBSYS=INIT,NET\"\n");
  const auto s = resolve_settings(c, "p", "n", slurm_match);
  ck_assert_str_eq(s.agent->c_str(), "/opt/ddp/bin/ddp-agent");
  ck_assert(s.port_range == (PortRange{21000, 21999}));
  ck_assert_int_eq(s.stop_grace->count(), 12000);
  ck_assert_int_eq(s.rdzv_timeout.count(), 90000);
  ck_assert_int_eq(s.heartbeat_timeout.count(), 3000);
  ck_assert(!s.bind_cpus);
  ck_assert(s.export_ib_hca);
  CK_STR_EQ(s.topology_file, "/etc/ddp/node.xml");
  CK_STR_EQ(s.gpu_info_dir, "/x/gpus");
  CK_STR_EQ(s.master_interface, "ib0");
  CK_STR_EQ(env_of(s, "NCCL_DEBUG"), "WARN");
  CK_STR_EQ(env_of(s, "NCCL_NET"), "IB (forced)");
  CK_STR_EQ(env_of(s, "NCCL_DEBUG_SUBSYS"), "INIT,NET");
}
END_TEST

START_TEST(partition_and_node_overrides_in_order_of_specificity) {
  const auto c = parse_ok(
      "NodeName=gpu[001-064] Env=NCCL_TOPO_FILE=/etc/nccl/a100.xml PortRange=25000-25099\n"
      "Env=NCCL_SOCKET_IFNAME=eth0 Env=NCCL_IB_GID_INDEX=3\n"
      "PartitionName=gpu,gpu-long Env=NCCL_SOCKET_IFNAME=ib0 PortRange=24000-24999\n"
      "NodeName=gpu007 Env=NCCL_IB_GID_INDEX=0\n");
  const auto cpu = resolve_settings(c, "cpu", "cn001", slurm_match);
  CK_STR_EQ(env_of(cpu, "NCCL_SOCKET_IFNAME"), "eth0");
  CK_STR_EQ(env_of(cpu, "NCCL_TOPO_FILE"), "<unset>");
  ck_assert_uint_eq(cpu.port_range.first, 20000);

  const auto gpu = resolve_settings(c, "gpu-long", "gpu002", slurm_match);
  CK_STR_EQ(env_of(gpu, "NCCL_SOCKET_IFNAME"), "ib0");  // partition beats global
  CK_STR_EQ(env_of(gpu, "NCCL_TOPO_FILE"), "/etc/nccl/a100.xml");
  CK_STR_EQ(env_of(gpu, "NCCL_IB_GID_INDEX"), "3");
  ck_assert_uint_eq(gpu.port_range.first, 25000);  // node set beats partition, whatever the file order

  const auto g7 = resolve_settings(c, "gpu", "gpu007", slurm_match);
  CK_STR_EQ(env_of(g7, "NCCL_IB_GID_INDEX"), "0");
  const auto g65 = resolve_settings(c, "gpu", "gpu065", slurm_match);  // outside gpu[001-064]
  CK_STR_EQ(env_of(g65, "NCCL_TOPO_FILE"), "<unset>");
}
END_TEST

START_TEST(unknown_key_names_file_line_and_known_keys) {
  const auto c = parse_site_config("PortRange=21000-21999\nAgnet=/x\n", "/etc/slurm/ddp.conf");
  ck_assert(!c.ok());
  CK_CONTAINS(c.error(), "/etc/slurm/ddp.conf:2: unknown key 'Agnet'");
  CK_CONTAINS(c.error(), "known keys: PartitionName, NodeName, Enabled, Agent");
}
END_TEST

START_TEST(bad_values_are_errors_with_the_fix) {
  const auto err = [](const char* text) {
    const auto c = parse_site_config(text, "f");
    ck_assert_msg(!c.ok(), "accepted: %s", text);
    return c.error();
  };
  CK_CONTAINS(err("Agent=bin/ddp-agent\n"), "f:1: Agent=bin/ddp-agent: use an absolute path");
  CK_CONTAINS(err("TopologyFile=node.xml\n"), "TopologyFile=node.xml: use an absolute path");
  CK_CONTAINS(err("MasterInterface=/dev/ib0\n"), "use an interface name");
  CK_CONTAINS(err("PortRange=30000-20000\n"), "low port is above");
  CK_CONTAINS(err("\njust words\n"), "f:2: expected Key=Value");
  CK_CONTAINS(err("BindCpus=maybe\n"), "use yes or no");
  CK_CONTAINS(err("StopGrace=-1\n"), "StopGrace");
  CK_CONTAINS(err("HeartbeatTimeout=0\n"), "HeartbeatTimeout=0 is out of range");
  CK_CONTAINS(err("Env=NCCL_DEBUG\n"), "Env=NAME=VALUE");
  CK_CONTAINS(err("Env=1BAD=x\n"), "Env=NAME=VALUE");
  CK_CONTAINS(err("ForceEnv=MASTER_ADDR=1.2.3.4\n"), "belongs to the worker contract");
  CK_CONTAINS(err("Env=TORCHELASTIC_RUN_ID=x\n"), "belongs to the worker contract");
  CK_CONTAINS(err("PortRange=21000-21999 PortRange=22000-22999\n"), "given twice");
  CK_CONTAINS(err("Env=A=1 PartitionName=gpu\n"), "must come first");
  CK_CONTAINS(err("PartitionName=gpu,,cpu Env=A=1\n"), "empty name");
  CK_CONTAINS(err("NodeName=gpu[1-4]\n"), "sets nothing");
  CK_CONTAINS(err("Env=\"A=1\n"), "double quote");
}
END_TEST

START_TEST(plugin_args_agent_and_config) {
  const auto a = parse_plugin_args({"agent=/usr/bin/ddp-agent", "config=/etc/slurm/ddp.conf"});
  ck_assert(a.ok());
  CK_STR_EQ(*a->agent, "/usr/bin/ddp-agent");
  CK_STR_EQ(*a->config, "/etc/slurm/ddp.conf");
  ck_assert(parse_plugin_args({}).ok());
  CK_CONTAINS(parse_plugin_args({"agnet=/x"}).error(), "unknown key 'agnet'");
  CK_CONTAINS(parse_plugin_args({"agent=relative"}).error(), "absolute path");
  ck_assert(!parse_plugin_args({"agent"}).ok());
}
END_TEST

// Configless nodes get plugstack.conf from slurmctld and no ddp.conf: its
// global settings can ride on the plugin's line, read as the file's first line.
// Without StopGrace, the agents stop their workers within Slurm's KillWait.
START_TEST(requeue_default_and_wait) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  const auto none = resolve_settings(SiteConfig{}, "p", "n", any);
  ck_assert(!none.requeue);
  ck_assert_int_eq(none.requeue_wait.count(), 60000);
  const auto c = parse_site_config("Requeue=yes RequeueWait=90\nPartitionName=debug Requeue=no\n", "t");
  ck_assert(c.ok());
  const auto batch = resolve_settings(*c, "batch", "n", any);
  ck_assert(batch.requeue);
  ck_assert_int_eq(batch.requeue_wait.count(), 90000);
  ck_assert(!resolve_settings(*c, "debug", "n", any).requeue);
  ck_assert(!parse_site_config("Requeue=maybe\n", "t").ok());
  ck_assert(!parse_site_config("RequeueWait=4000\n", "t").ok());
}
END_TEST

// JobComment=: the verdict in the job's Comment unless the site says no;
// not per node (node 0 writes it once for the job).
START_TEST(job_comment_default_and_scopes) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  ck_assert(resolve_settings(SiteConfig{}, "p", "n", any).job_comment);
  const auto c = parse_site_config("JobComment=no\nPartitionName=debug JobComment=yes\n", "t");
  ck_assert(c.ok());
  ck_assert(!resolve_settings(*c, "batch", "n", any).job_comment);
  ck_assert(resolve_settings(*c, "debug", "n", any).job_comment);
  const auto per_node = parse_site_config("NodeName=n1 JobComment=no\n", "t");
  ck_assert(!per_node.ok());
  CK_CONTAINS(per_node.error(), "not a NodeName= line");
  ck_assert(!parse_site_config("JobComment=maybe\n", "t").ok());
}
END_TEST

START_TEST(kill_switch_site_wide_or_per_partition_with_its_origin) {
  const auto any = [](const std::string&, const std::string&) { return true; };
  ck_assert(resolve_settings(SiteConfig{}, "p", "n", any).enabled);
  const auto c = parse_site_config("PortRange=21000-21999\nPartitionName=debug,old enabled=NO\n", "/etc/ddp.conf");
  ck_assert(c.ok());
  ck_assert(resolve_settings(*c, "batch", "n", any).enabled);
  const auto off = resolve_settings(*c, "old", "n", any);
  ck_assert(!off.enabled);
  ck_assert_str_eq(off.enabled_origin.c_str(), "/etc/ddp.conf:2");
  // Off everywhere, back on for one partition; the plugstack words count too.
  const auto all = parse_site_config("Enabled=no\nPartitionName=canary Enabled=yes\n", "f");
  ck_assert(all.ok());
  ck_assert(!resolve_settings(*all, "batch", "n", any).enabled);
  ck_assert(resolve_settings(*all, "canary", "n", any).enabled);
  const auto args = parse_plugin_args({"Enabled=no"});
  ck_assert(args.ok());
  const auto plugstack = resolve_settings(with_plugin_settings(SiteConfig{}, *args), "p", "n", any);
  ck_assert(!plugstack.enabled);
  ck_assert_str_eq(plugstack.enabled_origin.c_str(), "plugstack.conf arguments");
  // Off on some nodes of a step would strand the others' agents.
  CK_CONTAINS(parse_site_config("NodeName=n[1-2] Enabled=no\n", "f").error(),
              "f:1: Enabled= turns --ddp on or off for whole steps");
  CK_CONTAINS(parse_site_config("Enabled=perhaps\n", "f").error(), "f:1:");
}
END_TEST

START_TEST(hang_timeout_default_and_overrides) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  ck_assert_int_eq(resolve_settings(SiteConfig{}, "p", "n", any).hang_timeout.count(), 0);  // off
  const auto c = parse_site_config("HangTimeout=600\nPartitionName=debug HangTimeout=0\n", "t");
  ck_assert(c.ok());
  ck_assert_int_eq(resolve_settings(*c, "batch", "n", any).hang_timeout.count(), 600000);
  ck_assert_int_eq(resolve_settings(*c, "debug", "n", any).hang_timeout.count(), 0);
  ck_assert(!parse_site_config("HangTimeout=forever\n", "t").ok());
  ck_assert(!parse_site_config("HangTimeout=4000\n", "t").ok());
}
END_TEST

START_TEST(preflight_default_and_overrides) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  ck_assert(resolve_settings(SiteConfig{}, "p", "n", any).preflight == PreflightAction::Off);
  const auto c = parse_site_config("Preflight=check\nPartitionName=gpu Preflight=swap\n", "t");
  ck_assert(c.ok());
  ck_assert(resolve_settings(*c, "batch", "n", any).preflight == PreflightAction::Check);
  ck_assert(resolve_settings(*c, "gpu", "n", any).preflight == PreflightAction::Swap);
  CK_CONTAINS(parse_site_config("Preflight=yes\n", "t").error(), "Preflight=yes: use off, check or swap");
}
END_TEST

START_TEST(health_check_path_and_timeout) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  const auto none = resolve_settings(SiteConfig{}, "p", "n", any);
  ck_assert(none.health_check.empty());
  ck_assert_int_eq(none.health_check_timeout.count(), 60000);
  const auto c = parse_site_config("HealthCheck=/usr/libexec/gpu-health HealthCheckTimeout=120\n", "t");
  ck_assert(c.ok());
  const auto set = resolve_settings(*c, "p", "n", any);
  CK_STR_EQ(set.health_check, "/usr/libexec/gpu-health");
  ck_assert_int_eq(set.health_check_timeout.count(), 120000);
  CK_CONTAINS(parse_site_config("HealthCheck=gpu-health\n", "t").error(), "HealthCheck=gpu-health: use an absolute path");
  ck_assert(!parse_site_config("HealthCheckTimeout=0\n", "t").ok());
}
END_TEST

START_TEST(bad_node_hook_global_only) {
  const auto any = [](const std::string&, const std::string&) { return false; };
  ck_assert(resolve_settings(SiteConfig{}, "p", "n", any).bad_node_hook.empty());
  const auto c = parse_site_config("BadNodeHook=/usr/local/sbin/ddp-bad-node\n", "t");
  ck_assert(c.ok());
  CK_STR_EQ(resolve_settings(*c, "p", "n", any).bad_node_hook, "/usr/local/sbin/ddp-bad-node");
  CK_CONTAINS(parse_site_config("BadNodeHook=ddp-bad-node\n", "t").error(), "use an absolute path");
  // Root runs it: never chosen per partition or node.
  CK_CONTAINS(parse_site_config("PartitionName=gpu BadNodeHook=/x\n", "t").error(),
              "t:1: BadNodeHook= is run as root for every step that kept a node out, so it goes on a global line only");
  CK_CONTAINS(parse_site_config("NodeName=n1 BadNodeHook=/x\n", "t").error(), "global line only");
  ck_assert(parse_plugin_args({"BadNodeHook=/usr/local/sbin/ddp-bad-node"}).ok());
}
END_TEST

START_TEST(stop_grace_follows_kill_wait) {
  using std::chrono::seconds;
  ck_assert_int_eq(stop_grace_for(seconds(30)).count(), 27000);   // Slurm's default: 10% margin
  ck_assert_int_eq(stop_grace_for(std::nullopt).count(), 27000);  // unknown: as the default
  ck_assert_int_eq(stop_grace_for(seconds(5)).count(), 3000);     // at least 2 s of margin
  ck_assert_int_eq(stop_grace_for(seconds(2)).count(), 1000);     // never below 1 s
  ck_assert_int_eq(stop_grace_for(seconds(0)).count(), 1000);
  ck_assert_int_eq(stop_grace_for(seconds(120)).count(), 60000);  // capped
  const auto any = [](const std::string&, const std::string&) { return false; };
  ck_assert(!resolve_settings(SiteConfig{}, "p", "n", any).stop_grace);  // unset unless the site sets it
}
END_TEST

START_TEST(plugin_args_carry_global_settings) {
  const auto a = parse_plugin_args({"agent=/usr/bin/ddp-agent", "PortRange=30000-30999", "Env=NCCL_IB_GID_INDEX=3",
                                    "ForceEnv=NCCL_NET=IB", "StopGrace=20"});
  ck_assert_msg(a.ok(), "%s", a.ok() ? "" : a.error().c_str());
  auto file = parse_site_config("Env=NCCL_IB_GID_INDEX=5\nPartitionName=gpu StopGrace=30\n", "ddp.conf");
  ck_assert(file.ok());
  const auto config = with_plugin_settings(*file, *a);
  ck_assert_uint_eq(config.lines.size(), 3);
  CK_STR_EQ(config.lines[0].origin, "plugstack.conf arguments");
  const auto any = [](const std::string&, const std::string&) { return false; };
  const auto cpu = resolve_settings(config, "cpu", "n1", any);
  ck_assert_uint_eq(cpu.port_range.first, 30000);
  ck_assert_uint_eq(cpu.port_range.last, 30999);
  ck_assert_int_eq(cpu.stop_grace->count(), 20000);
  ck_assert_uint_eq(cpu.env.size(), 2);
  CK_STR_EQ(cpu.env[0].value, "5");  // the file's line comes later and wins
  ck_assert(cpu.env[1].forced);
  ck_assert_int_eq(resolve_settings(config, "gpu", "n1", any).stop_grace->count(), 30000);
  // No settings in the arguments: the file alone.
  ck_assert_uint_eq(with_plugin_settings(*file, PluginArgs{}).lines.size(), 2);

  CK_CONTAINS(parse_plugin_args({"NodeName=gpu1", "Env=A=1"}).error(), "belong in the site config file");
  CK_CONTAINS(parse_plugin_args({"PortRange=9-1"}).error(), "plugstack.conf argument 'PortRange=9-1': ");
  CK_CONTAINS(parse_plugin_args({"Env=RANK=1"}).error(), "worker contract");
  CK_CONTAINS(parse_plugin_args({"StopGrace=5", "StopGrace=6"}).error(), "twice");
}
END_TEST

// read_trusted_file() on real files in a scratch directory below /tmp (root's,
// sticky). Trusted owner: whoever runs the tests; the cases that need a file of
// another user (uid 65534) run only as root.
namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    char templ[] = "/tmp/ddp-trusted-XXXXXX";
    ck_assert_ptr_nonnull(::mkdtemp(templ));
    dir = templ;
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    const auto path = dir + "/" + name;
    std::ofstream(path) << text;
    ck_assert_int_eq(::chmod(path.c_str(), mode), 0);
    return path;
  }
};

std::string trusted_error(const std::string& path) {
  const auto r = read_trusted_file(path, "the site config", ::getuid());
  ck_assert_msg(!r.ok(), "accepted %s", path.c_str());
  return r.error();
}

constexpr uid_t kOtherUser = 65534;

}  // namespace

START_TEST(trusted_file_reads_a_safe_file_and_reports_a_missing_one) {
  const Scratch s;
  const auto path = s.write("ddp.conf", "PortRange=21000-21999\n", 0644);
  const auto r = read_trusted_file(path, "the site config", ::getuid());
  ck_assert_msg(r.ok(), "%s", r.ok() ? "" : r.error().c_str());
  ck_assert(r->has_value());
  CK_STR_EQ(**r, "PortRange=21000-21999\n");
  const auto missing = read_trusted_file(s.dir + "/none.conf", "the site config", ::getuid());
  ck_assert(missing.ok() && !missing->has_value());
  // Read-only for its owner is fine too.
  ck_assert(read_trusted_file(s.write("ro.conf", "", 0400), "the site config", ::getuid()).ok());
}
END_TEST

START_TEST(trusted_file_refuses_group_or_other_writable_with_the_fix) {
  const Scratch s;
  for (const mode_t mode : {mode_t(0664), mode_t(0646), mode_t(0666), mode_t(0620)}) {
    const auto path = s.write("ddp.conf", "", mode);
    const auto e = trusted_error(path);
    CK_CONTAINS(e, "the site config " + path + " must be owned by ");
    CK_CONTAINS(e, "&& chmod go-w " + path);
  }
}
END_TEST

START_TEST(trusted_file_refuses_what_is_not_a_regular_file) {
  const Scratch s;
  const auto dir = s.dir + "/ddp.conf";
  ck_assert_int_eq(::mkdir(dir.c_str(), 0755), 0);
  CK_CONTAINS(trusted_error(dir), "the site config " + dir + " is not a regular file");
  // A FIFO must be refused, not block slurmstepd in open().
  const auto fifo = s.dir + "/fifo.conf";
  ck_assert_int_eq(::mkfifo(fifo.c_str(), 0644), 0);
  CK_CONTAINS(trusted_error(fifo), "is not a regular file");
  CK_CONTAINS(trusted_error(s.write("big.conf", std::string((1u << 20) + 1, '#'), 0644)), "larger than 1 MiB");
}
END_TEST

START_TEST(trusted_file_through_a_link_checks_the_target_and_names_it) {
  const Scratch s;
  const auto target = s.write("target.conf", "", 0666);
  const auto link = s.dir + "/ddp.conf";
  ck_assert_int_eq(::symlink(target.c_str(), link.c_str()), 0);
  const auto e = trusted_error(link);
  CK_CONTAINS(e, "the site config " + link + " (a link to " + target + ") must be owned by");
  CK_CONTAINS(e, "chmod go-w " + target);
  if (::getuid() != 0) return;
  // A link to a file of another user (root only: chown).
  ck_assert_int_eq(::chmod(target.c_str(), 0644), 0);
  ck_assert_int_eq(::chown(target.c_str(), kOtherUser, kOtherUser), 0);
  CK_CONTAINS(trusted_error(link), "fix with: chown root " + target);
  // The same file named directly.
  CK_CONTAINS(trusted_error(target), "the site config " + target + " must be owned by root and writable only by root");
}
END_TEST

START_TEST(trusted_file_refuses_a_directory_others_can_write_to) {
  const Scratch s;
  const auto open_dir = s.dir + "/open";
  ck_assert_int_eq(::mkdir(open_dir.c_str(), 0755), 0);
  ck_assert_int_eq(::chmod(open_dir.c_str(), 0775), 0);
  const auto path = open_dir + "/ddp.conf";
  std::ofstream(path) << "";
  ck_assert_int_eq(::chmod(path.c_str(), 0644), 0);
  auto e = trusted_error(path);
  CK_CONTAINS(e, "the directory " + open_dir + " above the site config " + path + " must be owned by");
  CK_CONTAINS(e, "chmod go-w " + open_dir);
  // A sticky directory (like /tmp) is fine: nobody else can replace our file there.
  ck_assert_int_eq(::chmod(open_dir.c_str(), 01777), 0);
  ck_assert(read_trusted_file(path, "the site config", ::getuid()).ok());
  // A link that lives in a writable directory can be re-pointed: refused even
  // though the file it leads to is safe.
  ck_assert_int_eq(::chmod(open_dir.c_str(), 0777), 0);
  const auto safe = s.write("safe.conf", "", 0644);
  const auto link = open_dir + "/link.conf";
  ck_assert_int_eq(::symlink(safe.c_str(), link.c_str()), 0);
  CK_CONTAINS(trusted_error(link), "the directory " + open_dir + " above");
  if (::getuid() != 0) return;
  // A directory of another user, even one only they can write to.
  ck_assert_int_eq(::chmod(open_dir.c_str(), 0755), 0);
  ck_assert_int_eq(::chown(open_dir.c_str(), kOtherUser, kOtherUser), 0);
  CK_CONTAINS(trusted_error(path), "fix with: chown root " + open_dir);
}
END_TEST

START_TEST(hostlists_expand_in_order_and_refuse_what_no_step_has) {
  const auto names = spank::expand_hostlist("n[0-3,7],login1", spank::HostlistSource::Job);
  ck_assert(names.ok());
  ck_assert_uint_eq(names->size(), 6);
  ck_assert_str_eq((*names)[4].c_str(), "n7");
  ck_assert_str_eq((*names)[5].c_str(), "login1");
  ck_assert(spank::hostlist_contains("gpu[001-064]", "gpu007"));
  ck_assert(!spank::hostlist_contains("gpu[001-064]", "gpu065"));
  ck_assert(!spank::hostlist_contains("gpu[003-1]", "gpu001"));  // unparsable: matches nothing
  CK_CONTAINS(spank::expand_hostlist("gpu[003-1]", spank::HostlistSource::Admin).error(), "cannot parse the node list 'gpu[003-1]'");
  // ",[": Slurm 22.05 reads one host named "", which we refuse; 24.11's parser
  // refuses the list itself. Refused either way, with the list named.
  const auto empty = spank::expand_hostlist(",[", spank::HostlistSource::Job);
  ck_assert(!empty.ok());
  ck_assert_msg(empty.error().find("names an empty node") != std::string::npos ||
                    empty.error().find("cannot parse the node list ',['") != std::string::npos,
                "%s", empty.error().c_str());
  // Counted before expanded: 120,002 names are refused, not allocated.
  CK_CONTAINS(spank::expand_hostlist("a[0-60000],b[0-60000]", spank::HostlistSource::Job).error(), "names 120002 nodes, more than the 65536");
}
END_TEST

// Slurm 22.05's parser calls fatal() at 262,145 ranges, which would end the
// slurmstepd (here: this test) that parses: refused before Slurm sees them.
START_TEST(hostlists_out_of_bounds_never_reach_slurms_parser) {
  using spank::HostlistSource;
  std::string ranges = "n[";
  for (int i = 0; i < 262145; ++i) ranges += i ? ",1" : "1";
  ranges += "]";
  ck_assert_uint_lt(ranges.size(), ddp::kMaxNodeListBytes);  // within the length bound
  CK_CONTAINS(spank::expand_hostlist(ranges, HostlistSource::Job).error(),
              "has 262145 ranges, more than the 65536 nodes a step can have");
  CK_CONTAINS(spank::expand_hostlist(ranges, HostlistSource::Admin).error(), "has 262145 ranges");
  const std::string long_list(ddp::kMaxNodeListBytes + 1, 'n');
  CK_CONTAINS(spank::expand_hostlist(long_list, HostlistSource::Job).error(),
              "is 1048577 bytes long, more than the 1048576");
  // 27 bytes that Slurm would multiply into 8e9 names, slowly.
  CK_CONTAINS(spank::expand_hostlist("x[0-1999]x[0-1999]x[0-1999]", HostlistSource::Job).error(),
              "has a name with more than one [...] group");
  // slurm.conf's forms stay the admin's to use in NodeName=.
  const auto racks = spank::expand_hostlist("rack[1-2]-n[1-2],login1", HostlistSource::Admin);
  ck_assert_msg(racks.ok(), "%s", racks.ok() ? "" : racks.error().c_str());
  ck_assert_uint_eq(racks->size(), 5);
  ck_assert(spank::check_hostlist_bounds("a[1-2],b[3-4] c[5]", HostlistSource::Job).ok());
}
END_TEST

Suite* site_config_suite() {
  return make_suite(
      "site_config",
      {empty_config_gives_defaults, slurm_style_words_keys_case_insensitive,
       partition_and_node_overrides_in_order_of_specificity, unknown_key_names_file_line_and_known_keys,
       bad_values_are_errors_with_the_fix, plugin_args_agent_and_config, plugin_args_carry_global_settings,
       stop_grace_follows_kill_wait, requeue_default_and_wait, job_comment_default_and_scopes, kill_switch_site_wide_or_per_partition_with_its_origin,
       hang_timeout_default_and_overrides, preflight_default_and_overrides, health_check_path_and_timeout,
       bad_node_hook_global_only,
       trusted_file_reads_a_safe_file_and_reports_a_missing_one,
       trusted_file_refuses_group_or_other_writable_with_the_fix, trusted_file_refuses_what_is_not_a_regular_file,
       trusted_file_through_a_link_checks_the_target_and_names_it,
       trusted_file_refuses_a_directory_others_can_write_to, hostlists_expand_in_order_and_refuse_what_no_step_has,
       hostlists_out_of_bounds_never_reach_slurms_parser});
}
