// The site config (/etc/slurm/ddp.conf by default) and the plugstack.conf
// arguments of spank_ddp.so.
//
// Slurm-style lines of Key=Value words, keys case-insensitive:
//
//   PortRange=20000-29999 Env=NCCL_IB_GID_INDEX=3          # global settings
//   PartitionName=gpu,gpu-long ForceEnv=NCCL_NET=IB         # for these partitions
//   NodeName=gpu[001-064] Env=NCCL_TOPO_FILE=/etc/nccl/a.xml  # for these nodes
//
// Later and more specific lines win: global < partition < node set, and in
// file order within each. Strict: an unknown key or a bad value is an error
// naming file:line and the fix, because a typo silently ignored on 500 nodes is
// an outage nobody can explain.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/base/result.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

// One environment variable the site exports into --ddp steps.
struct EnvSetting {
  std::string name;
  std::string value;
  bool forced = false;  // ForceEnv: replaces the user's own value; Env: only when unset
  bool operator==(const EnvSetting&) const = default;
};

// What one line sets; unset fields leave the value from wider scopes.
struct SettingsPatch {
  std::optional<bool> enabled;  // Enabled=no: the kill switch (site-wide or per partition)
  std::optional<std::string> agent;
  std::optional<PortRange> port_range;
  std::optional<std::chrono::milliseconds> stop_grace;
  std::optional<std::chrono::milliseconds> rdzv_timeout;
  std::optional<std::chrono::milliseconds> heartbeat_timeout;
  std::optional<bool> bind_cpus;
  std::optional<bool> export_ib_hca;
  std::optional<bool> requeue;
  std::optional<bool> job_comment;
  std::optional<std::chrono::milliseconds> requeue_wait;
  std::optional<std::chrono::milliseconds> hang_timeout;
  std::optional<std::string> health_check;
  std::optional<std::chrono::milliseconds> health_check_timeout;
  std::optional<std::string> bad_node_hook;
  std::optional<std::string> topology_file;
  std::optional<std::string> gpu_info_dir;
  std::optional<std::string> master_interface;
  std::optional<PreflightAction> preflight;
  std::vector<EnvSetting> env;
  bool operator==(const SettingsPatch&) const = default;
};

struct ConfigLine {
  enum class Scope { Global, Partitions, Nodes } scope = Scope::Global;
  std::vector<std::string> partitions;  // Scope::Partitions
  std::string nodes;                    // Scope::Nodes: a Slurm hostlist expression
  SettingsPatch patch;
  std::string origin;  // "file:line"
};

struct SiteConfig {
  std::vector<ConfigLine> lines;
};

// The effective settings on one node for one job.
struct Settings {
  // The kill switch: false means --ddp steps run as plain srun steps, with one
  // line for the user naming `enabled_origin` (the file:line that said no).
  bool enabled = true;
  std::string enabled_origin;
  std::optional<std::string> agent;  // absent: plugstack's agent= or the built-in path
  PortRange port_range{20000, 29999};
  std::optional<std::chrono::milliseconds> stop_grace;    // SIGTERM -> SIGKILL; unset: stop_grace_for(KillWait)
  std::chrono::milliseconds rdzv_timeout{60000};          // all nodes' agents must meet within this
  std::chrono::milliseconds heartbeat_timeout{5000};      // a node silent this long is lost
  bool bind_cpus = true;                                  // pin workers to the cores near their GPU
  bool export_ib_hca = false;                             // NCCL_IB_HCA = the NIC closest to the GPU
  bool requeue = false;                                   // --ddp-requeue unless the user says otherwise
  std::chrono::milliseconds requeue_wait{60000};          // the longest wait for the workers to save
  // JobComment: node 0 writes a failed step's verdict into the job's Comment
  // after the user's own text (agent/slurm/job_report.hpp); no for a site
  // that keeps the Comment for its own accounting. Not on NodeName= lines.
  bool job_comment = true;
  std::chrono::milliseconds hang_timeout{0};              // --ddp-hang-timeout's default (0: off)
  std::string health_check;                               // run by the agent after a worker failure ("" = none)
  std::chrono::milliseconds health_check_timeout{60000};  // a check that takes longer has failed
  // Run as root by the plugin on node 0 when a step ends, once per bad node of
  // the step (spank/bad_node_hook.hpp); "" = none. Global lines only.
  std::string bad_node_hook;
  std::string topology_file;                              // hwloc XML instead of probing (VMs, containers, tests)
  std::string gpu_info_dir = "/proc/driver/nvidia/gpus";  // where "Device Minor" maps to bus ids
  std::string master_interface;  // MASTER_ADDR = node 0's address on this interface (IPoIB); "" = NodeAddr
  PreflightAction preflight = PreflightAction::Off;  // --ddp-preflight's default
  std::vector<EnvSetting> env;   // one entry per name, the winning one
  bool operator==(const Settings&) const = default;
};

// The agents' SIGTERM -> SIGKILL grace when the site sets no StopGrace: Slurm's
// KillWait (its own grace between SIGTERM and SIGKILL for a step it ends;
// 30 s when unknown) less a margin of 10%, at least 2 s, so the agents end
// their workers and report before Slurm kills them all; between 1 and 60 s (a
// failure elsewhere should not wait minutes for a worker that ignores SIGTERM).
std::chrono::milliseconds stop_grace_for(std::optional<std::chrono::seconds> kill_wait);

// Parses the text of a config file; `origin` names it in messages.
Result<SiteConfig> parse_site_config(std::string_view text, std::string_view origin);

// Reads a file that only `owner` (root, for the plugin) can have written: the
// site config chooses the binary every --ddp step runs, and it is read as root
// inside slurmstepd. Refused, with the chown/chmod that fixes it: a file that
// is not regular (a directory, a FIFO), not owned by `owner`, writable by group
// or others (through a symbolic link: the file it leads to), larger than 1 MiB,
// or below a directory that someone else can write to (owner not `owner`, or
// group/other-writable without the sticky bit), on the path as named or as
// resolved, since whoever can write to a directory can replace what is in it.
// The checks are made on the opened file, so nothing can be swapped in between.
// `what` names the file in messages ("the site config"). nullopt: it does not
// exist (the caller decides whether that is fine).
Result<std::optional<std::string>> read_trusted_file(const std::string& path, std::string_view what, uid_t owner = 0);

// Does hostlist expression `nodes` ("gpu[001-064],login1") contain `node`?
// The plugin answers with Slurm's own hostlist code.
using NodeMatcher = std::function<bool(const std::string& nodes, const std::string& node)>;

Settings resolve_settings(const SiteConfig& config, const std::string& partition, const std::string& node,
                          const NodeMatcher& matcher);

// The variables the worker contract owns: the site may not set them.
bool is_contract_variable(std::string_view name);

struct PluginArgs {
  std::optional<std::string> agent;   // agent=PATH
  std::optional<std::string> config;  // config=PATH
  // Any global setting of the site config (PortRange=, Env=, ...), for sites
  // whose nodes get plugstack.conf from slurmctld and no other file
  // (configless); it reads as the site config's first line, so the file can
  // still override it.
  SettingsPatch settings;
  bool operator==(const PluginArgs&) const = default;
};

// The words after the plugin path on its plugstack.conf line.
Result<PluginArgs> parse_plugin_args(const std::vector<std::string_view>& args);

// The site config with the plugstack.conf settings in front.
SiteConfig with_plugin_settings(SiteConfig config, const PluginArgs& args);

}  // namespace ddp
