// Slurm's node lists ("gpu[001-064],login1"), through Slurm's own hostlist
// code so the plugin reads them exactly as Slurm writes them. The slurm_*
// functions come from the process that loads the plugin (see slurm.hpp); the
// unit tests and the fuzz target link libslurm instead.
#pragma once

#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::spank {

// Far above any real cluster; a longer list is an error, not an allocation.
inline constexpr int kMaxHostlistNodes = 65536;

// "n[0-3,7]" -> n0 n1 n2 n3 n7, in order. Error when Slurm cannot parse the
// list, when it names no node, or more than kMaxHostlistNodes.
Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist);
// Is `node` in the node list `nodes`? False also when `nodes` does not parse
// (the site config checks its NodeName= lists when it is read).
bool hostlist_contains(const std::string& nodes, const std::string& node);

}  // namespace ddp::spank
