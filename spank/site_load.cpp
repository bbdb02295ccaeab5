#include "site_load.hpp"

#include <cerrno>
#include <cstring>

#include "hostlist.hpp"

namespace ddp::spank {

// Runs as root: the config must be root's and writable by nobody else (nor
// may any directory above it be), or a user could point the plugin at a
// binary of their choice; read_trusted_file() checks the file it opened.
Result<SiteConfig> load_site_config(const std::string& path, bool explicit_path) {
  auto text = read_trusted_file(path, "the site config");
  if (!text) return fail(text.error());
  if (!*text) {
    if (!explicit_path) return SiteConfig{};  // built-in defaults
    return fail("cannot read the site config " + path + ": " + std::strerror(ENOENT) +
                " (named by config= in plugstack.conf)");
  }
  auto config = parse_site_config(**text, path);
  if (!config) return config;
  // parse_site_config is pure; the node lists are Slurm's syntax, so Slurm's
  // code checks them here: a NodeName= typo that matched nothing would
  // silently leave those nodes on the wider settings.
  for (const auto& line : config->lines) {
    if (line.scope != ConfigLine::Scope::Nodes) continue;
    if (auto nodes = expand_hostlist(line.nodes, HostlistSource::Admin); !nodes)
      return fail(line.origin + ": NodeName=" + line.nodes + ": " + nodes.error() +
                  "; write it as in slurm.conf, e.g. NodeName=gpu[001-064]");
  }
  return config;
}

}  // namespace ddp::spank
