// The site config (/etc/slurm/ddp.conf by default) and the plugstack.conf
// arguments of spank_ddp.so. Strict: an unknown key or a malformed line is an
// error that names the file, the line and the fix, because a typo silently
// ignored on 500 nodes is an outage nobody can explain.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/parse.hpp"
#include "ddp/result.hpp"

namespace ddp {

struct SiteConfig {
  std::optional<std::string> agent;    // agent = /path/ddp-agent
  PortRange port_range{20000, 29999};  // port_range = LOW-HIGH
  bool operator==(const SiteConfig&) const = default;
};

// Parses the text of a config file; `origin` names it in messages.
// Format: "key = value" lines, '#' starts a comment, blank lines ignored.
Result<SiteConfig> parse_site_config(std::string_view text, std::string_view origin);

struct PluginArgs {
  std::optional<std::string> agent;   // agent=PATH
  std::optional<std::string> config;  // config=PATH
  bool operator==(const PluginArgs&) const = default;
};

// The words after the plugin path on its plugstack.conf line.
Result<PluginArgs> parse_plugin_args(const std::vector<std::string_view>& args);

}  // namespace ddp
