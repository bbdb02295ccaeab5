#include "requeue_exclusion.hpp"

#include "hostlist.hpp"
#include "log.hpp"

namespace ddp::spank {

std::optional<std::string> excluded_with(const std::string& excluded, const std::vector<std::string>& nodes) {
  std::string list = excluded;
  bool added = false;
  for (const auto& node : nodes) {
    if (node.empty() || hostlist_contains(list, node)) continue;
    list += (list.empty() ? "" : ",") + node;
    added = true;
  }
  if (!added) return std::nullopt;
  return list;
}

void keep_out_of_requeue(const KeptOut& kept_out) {
  if (kept_out.nodes.empty() || !kept_out.record.pending) return;  // nothing kept out, or not requeued
  std::vector<std::string> names;
  for (const auto& bad : kept_out.nodes) names.push_back(bad.node);
  const auto list = excluded_with(kept_out.record.exc_nodes, names);
  if (!list) return;  // excluded already
  job_desc_msg_t update;
  slurm_init_job_desc_msg(&update);
  std::string id = kept_out.record.id, exc = *list;
  update.job_id_str = id.data();  // every release reads the id from here
  update.exc_nodes = exc.data();
  if (slurm_update_job(&update) != SLURM_SUCCESS)
    return for_admin(kept_out.where + ": requeued, but its ExcNodeList could not be set to " + exc + ": " +
                     slurm_strerror(slurm_compat::last_error()) + "; it may be given those nodes again");
  for_admin(kept_out.where + ": requeued; ExcNodeList now " + exc + " (the nodes its step kept out for cause)");
}

}  // namespace ddp::spank
