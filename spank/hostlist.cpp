#include "hostlist.hpp"

#include <algorithm>
#include <cstdlib>

#include "slurm.hpp"

namespace ddp::spank {

Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist) {
  hostlist_t hosts = slurm_hostlist_create(hostlist.c_str());
  if (!hosts) return fail("cannot parse the node list '" + hostlist + "'");
  // Counted before expanded: a list comes from the job's environment, and
  // "n[0-99999999]" must not take slurmstepd's memory one name at a time.
  if (const int count = slurm_hostlist_count(hosts); count > kMaxHostlistNodes) {
    slurm_hostlist_destroy(hosts);
    return fail("the node list '" + hostlist.substr(0, 64) + "' names " + std::to_string(count) +
                " nodes, more than the " + std::to_string(kMaxHostlistNodes) + " a step can have");
  }
  std::vector<std::string> names;
  while (char* host = slurm_hostlist_shift(hosts)) {
    names.emplace_back(host);
    std::free(host);  // hostlist_shift returns malloc'd memory the caller owns
  }
  slurm_hostlist_destroy(hosts);
  if (names.empty()) return fail("the node list '" + hostlist + "' is empty");
  // Slurm reads ",[" as one host named "" (found by fuzzing): no node is.
  if (std::find(names.begin(), names.end(), "") != names.end())
    return fail("the node list '" + hostlist + "' names an empty node");
  return names;
}

bool hostlist_contains(const std::string& nodes, const std::string& node) {
  hostlist_t hosts = slurm_hostlist_create(nodes.c_str());
  if (!hosts) return false;
  const bool found = slurm_hostlist_find(hosts, node.c_str()) >= 0;
  slurm_hostlist_destroy(hosts);
  return found;
}

}  // namespace ddp::spank
