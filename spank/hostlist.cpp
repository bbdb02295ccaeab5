#include "hostlist.hpp"

#include <algorithm>
#include <cstdlib>

#include "ddp/base/bounds.hpp"
#include "slurm.hpp"

namespace ddp::spank {

namespace {

// Slurm's hostlist, destroyed on every path (the handle's type differs
// between releases: slurm.hpp).
class Hostlist {
 public:
  explicit Hostlist(const std::string& text) : handle_(slurm_hostlist_create(text.c_str())) {}
  ~Hostlist() {
    if (handle_) slurm_hostlist_destroy(handle_);
  }
  Hostlist(const Hostlist&) = delete;
  Hostlist& operator=(const Hostlist&) = delete;
  explicit operator bool() const { return handle_ != nullptr; }
  slurm_compat::HostlistHandle get() const { return handle_; }

 private:
  slurm_compat::HostlistHandle handle_;
};

}  // namespace

Status check_hostlist_bounds(std::string_view hostlist, HostlistSource source) {
  const std::string shown = "the node list '" + std::string(hostlist.substr(0, 64)) + (hostlist.size() > 64 ? "...'" : "'");
  if (hostlist.size() > kMaxNodeListBytes)
    return fail(shown + " is " + std::to_string(hostlist.size()) + " bytes long, more than the " +
                std::to_string(kMaxNodeListBytes) + " a step's node list can have");
  std::size_t ranges = 1;
  int depth = 0;
  int groups_in_name = 0;
  for (const char c : hostlist) {
    if (c == '[' && depth++ == 0 && ++groups_in_name > 1 && source == HostlistSource::Job)
      return fail(shown + " has a name with more than one [...] group, which Slurm never writes for a step");
    if (c == ']' && depth > 0) --depth;
    if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
      ++ranges;
      if (depth == 0) groups_in_name = 0;
    }
  }
  if (ranges > std::size_t(kMaxHostlistNodes))
    return fail(shown + " has " + std::to_string(ranges) + " ranges, more than the " +
                std::to_string(kMaxHostlistNodes) + " nodes a step can have");
  return Ok{};
}

Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist, HostlistSource source) {
  if (auto ok = check_hostlist_bounds(hostlist, source); !ok) return fail(ok.error());
  Hostlist list(hostlist);
  if (!list) return fail("cannot parse the node list '" + hostlist + "'");
  const auto hosts = list.get();
  // Counted before expanded: a list comes from the job's environment, and
  // "n[0-99999999]" must not take slurmstepd's memory one name at a time.
  if (const int count = slurm_hostlist_count(hosts); count > kMaxHostlistNodes) {
    return fail("the node list '" + hostlist.substr(0, 64) + "' names " + std::to_string(count) +
                " nodes, more than the " + std::to_string(kMaxHostlistNodes) + " a step can have");
  }
  std::vector<std::string> names;
  while (char* host = slurm_hostlist_shift(hosts)) {
    names.emplace_back(host);
    std::free(host);  // hostlist_shift returns malloc'd memory the caller owns
  }
  if (names.empty()) return fail("the node list '" + hostlist + "' is empty");
  // Slurm reads ",[" as one host named "": no node is.
  if (std::find(names.begin(), names.end(), "") != names.end())
    return fail("the node list '" + hostlist + "' names an empty node");
  return names;
}

bool hostlist_contains(const std::string& nodes, const std::string& node) {
  if (!check_hostlist_bounds(nodes, HostlistSource::Admin)) return false;
  Hostlist list(nodes);
  return list && slurm_hostlist_find(list.get(), node.c_str()) >= 0;
}

}  // namespace ddp::spank
