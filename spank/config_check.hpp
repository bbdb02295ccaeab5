// ddp-check-config's findings, worked out from values: the plugstack lines,
// the site config and what slurmctld knows. Pure, so every rule is unit-tested;
// check_config_main.cpp reads the files, asks slurmctld and prints.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"
#include "ddp/site/site_config.hpp"

namespace ddp::spank {

struct Finding {
  enum class Level { Error, Warning } level = Level::Error;
  std::string where;  // FILE:LINE, or "" for the site as a whole
  std::string text;   // what is wrong and the fix
  bool operator==(const Finding&) const = default;
};

// One line of a plugstack.conf as Slurm reads it (spank.c):
// "required|optional PATH [ARGS...]" or "include GLOB".
struct PlugstackLine {
  enum class Kind { Required, Optional, Include } kind = Kind::Required;
  std::string path;
  std::vector<std::string> args;
  std::string where;  // FILE:LINE
};

// nullopt: a blank or comment line. Error: a line Slurm would not read.
Result<std::optional<PlugstackLine>> parse_plugstack_line(std::string_view text, std::string where);

// A required or optional line whose plugin file is spank_ddp.so.
bool loads_spank_ddp(const PlugstackLine& line);

// The lines that load spank_ddp.so (after includes), with: is a file at
// each one's path? And the package's own line (DDP_PLUGSTACK_INCLUDE_DIR):
// a line elsewhere naming the plugin survives `apt remove`.
std::vector<Finding> check_plugstack(const std::vector<PlugstackLine>& ours,
                                     const std::function<bool(const std::string&)>& file_exists,
                                     std::string_view package_dir);

// What slurmctld knows, for the site config's names.
struct SlurmView {
  struct Partition {
    std::string name;
    std::string nodes;  // Slurm hostlist
  };
  std::vector<Partition> partitions;
  std::vector<std::string> nodes;
};

// PartitionName= lines naming no partition, NodeName= lines matching no node.
std::vector<Finding> check_names(const SiteConfig& config, const SlurmView& slurm, const NodeMatcher& matcher);

// One partition's effective settings, as a line for the admin.
std::string describe_partition(const std::string& partition, const Settings& settings);

}  // namespace ddp::spank
