// Slurm's node lists ("gpu[001-064],login1"), through Slurm's own hostlist
// code so the plugin reads them exactly as Slurm writes them. The slurm_*
// functions come from the process that loads the plugin (see slurm.hpp); the
// unit tests and the fuzz target link libslurm instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::spank {

// Far above any real cluster; a longer list is an error, not an allocation.
inline constexpr int kMaxHostlistNodes = 65536;

// Who wrote a node list. Job: the job's environment, the user's (Slurm writes
// these with one bracket per name, "gpu[001-064]"); Admin: the site config,
// which may use slurm.conf's forms such as "rack[1-2]-n[1-4]".
enum class HostlistSource { Job, Admin };

// Checked before Slurm's parser sees a list: Slurm 22.05's libslurm calls
// fatal() (ending the daemon that parses) at 262,145 ranges, and a name with
// several bracket groups multiplies them ("x[0-1999]x[0-1999]x[0-1999]", 27 kB,
// names 8e9 hosts and takes minutes and gigabytes to parse). So: at most
// kMaxNodeListBytes, at most kMaxHostlistNodes ranges (separators + 1), and for
// a Job list at most one bracket group per name. Error: which bound, and how far.
Status check_hostlist_bounds(std::string_view hostlist, HostlistSource source);

// "n[0-3,7]" -> n0 n1 n2 n3 n7, in order. Error when the list is out of bounds
// (above), when Slurm cannot parse it, when it names no node, or more than
// kMaxHostlistNodes.
Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist, HostlistSource source);
// Is `node` in the node list `nodes`? False also when `nodes` does not parse
// (the site config checks its NodeName= lists when it is read).
bool hostlist_contains(const std::string& nodes, const std::string& node);

}  // namespace ddp::spank
