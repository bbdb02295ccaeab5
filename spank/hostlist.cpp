#include "hostlist.hpp"

#include <algorithm>
#include <cstdlib>

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

Result<std::vector<std::string>> expand_hostlist(const std::string& hostlist) {
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
  // Slurm reads ",[" as one host named "" (found by fuzzing): no node is.
  if (std::find(names.begin(), names.end(), "") != names.end())
    return fail("the node list '" + hostlist + "' names an empty node");
  return names;
}

bool hostlist_contains(const std::string& nodes, const std::string& node) {
  Hostlist list(nodes);
  return list && slurm_hostlist_find(list.get(), node.c_str()) >= 0;
}

}  // namespace ddp::spank
