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

void exclude_from_requeue(const BadNodes& report) {
  if (report.nodes.empty() || !report.record.pending) return;  // no bad node, or not requeued
  std::vector<std::string> names;
  for (const auto& bad : report.nodes) names.push_back(bad.node);
  const auto list = excluded_with(report.record.exc_nodes, names);
  if (!list) return;  // excluded already
  job_desc_msg_t update;
  slurm_init_job_desc_msg(&update);
  std::string id = report.record.id, exc = *list;
  update.job_id_str = id.data();  // every release reads the id from here
  update.exc_nodes = exc.data();
  if (slurm_update_job(&update) != SLURM_SUCCESS)
    return for_admin(report.where + ": requeued, but its ExcNodeList could not be set to " + exc + ": " +
                     slurm_strerror(slurm_compat::last_error()) + "; it may be given those nodes again");
  for_admin(report.where + ": requeued; ExcNodeList now " + exc + " (the bad nodes of its step)");
}

}  // namespace ddp::spank
