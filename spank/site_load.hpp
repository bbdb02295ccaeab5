// The site config as the plugin loads it in slurmstepd, and as
// ddp-check-config loads it for the admin: one function, so the check reads
// the file exactly as every --ddp step will.
#pragma once

#include <string>

#include "ddp/base/result.hpp"
#include "ddp/site/site_config.hpp"

namespace ddp::spank {

// Reads `path` with read_trusted_file() (root's, writable by root only, every
// directory above it too), parses it and checks its NodeName= lists with
// Slurm's hostlist code. A missing file is the built-in defaults unless
// `explicit_path` (named by config= on the plugstack line).
Result<SiteConfig> load_site_config(const std::string& path, bool explicit_path);

}  // namespace ddp::spank
