#include "ddp/plan/roster.hpp"

#include <algorithm>
#include <limits>

#include "ddp/plan/workers.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

Result<Roster> make_roster(std::vector<std::uint32_t> capacity, std::uint32_t spares) {
  const auto nnodes = std::uint32_t(capacity.size());
  if (auto ok = check_membership(spares, std::nullopt, nnodes, false); !ok) return fail(ok.error());
  Roster roster;
  for (std::uint32_t node = 0; node < nnodes - spares; ++node) roster.groups.push_back({node, capacity[node]});
  roster.lost.assign(nnodes, false);
  roster.capacity = std::move(capacity);
  return roster;
}

std::optional<std::uint32_t> group_of(const Roster& roster, std::uint32_t node) {
  for (std::uint32_t g = 0; g < roster.groups.size(); ++g)
    if (roster.groups[g].node == node) return g;
  return std::nullopt;
}

std::vector<std::uint32_t> spare_nodes(const Roster& roster) {
  // Marked once, not group_of() per node: linear at 16,384 nodes, not quadratic.
  std::vector<bool> in_group(roster.capacity.size(), false);
  for (const auto& g : roster.groups)
    if (g.node < in_group.size()) in_group[g.node] = true;
  std::vector<std::uint32_t> spares;
  for (std::uint32_t node = 0; node < roster.capacity.size(); ++node)
    if (!roster.lost[node] && !in_group[node]) spares.push_back(node);
  return spares;
}

std::uint64_t world_size(const Roster& roster) {
  std::uint64_t world = 0;
  for (const auto& g : roster.groups) world += g.workers;
  return world;
}

RosterChange lose_node(Roster& roster, std::uint32_t node, std::uint32_t min_groups,
                       const std::function<std::string(std::uint32_t)>& node_name) {
  RosterChange change;
  if (node >= roster.lost.size() || roster.lost[node]) return change;
  roster.lost[node] = true;
  change.group = group_of(roster, node);
  const auto spares_left = [&] { return std::to_string(spare_nodes(roster).size()) + " spare(s) left"; };
  if (!change.group) {
    change.text = "spare node " + node_name(node) + " was lost; " + spares_left();
    return change;
  }
  const std::uint32_t g = *change.group;
  const std::uint32_t workers = roster.groups[g].workers;
  // The first spare that can run the group's workers (nodes may differ in GPUs).
  for (const auto spare : spare_nodes(roster)) {
    if (roster.capacity[spare] < workers) continue;
    roster.groups[g].node = spare;
    change.kind = RosterChange::Kind::Replaced;
    change.spare = spare;
    change.text = "spare node " + node_name(spare) + " takes over group " + std::to_string(g) + " (" +
                  std::to_string(workers) + " worker(s)) from node " + node_name(node) + "; " + spares_left();
    return change;
  }
  const auto groups = std::uint32_t(roster.groups.size());
  const std::string no_spare = spare_nodes(roster).empty() ? "no spare node left"
                                                            : "no spare node left that can run " +
                                                                  std::to_string(workers) + " worker(s)";
  if (min_groups > 0 && groups - 1 >= min_groups) {
    roster.groups.erase(roster.groups.begin() + g);
    change.kind = RosterChange::Kind::Shrunk;
    change.text = no_spare + ": going on with " + std::to_string(groups - 1) + " node(s), " +
                  std::to_string(world_size(roster)) + " worker(s) (--ddp-min-nodes=" + std::to_string(min_groups) +
                  ")";
    return change;
  }
  change.kind = RosterChange::Kind::CannotGoOn;
  change.text = no_spare + (min_groups > 0 ? " and the step is at its minimum of " + std::to_string(min_groups) +
                                                 " node(s) (--ddp-min-nodes)"
                                           : " (--ddp-spares; --ddp-min-nodes=M would go on with fewer nodes)");
  return change;
}

Result<std::optional<GroupSeat>> seat_of(const std::vector<std::uint32_t>& group_nodes,
                                         const std::vector<std::uint32_t>& group_workers, std::uint32_t node) {
  if (group_nodes.empty() || group_nodes.size() != group_workers.size())
    return fail("the rendezvous named " + std::to_string(group_nodes.size()) + " group(s) but gave " +
                std::to_string(group_workers.size()) + " worker count(s)");
  std::optional<GroupSeat> seat;
  for (std::uint32_t g = 0; g < group_nodes.size(); ++g) {
    if (group_nodes[g] != node) continue;
    if (seat) return fail("the rendezvous gave node " + std::to_string(node) + " two groups");
    const auto layout = rank_layout(group_workers, g);
    if (!layout) return fail(layout.error());
    seat = GroupSeat{g, std::uint32_t(group_nodes.size()), group_workers[g], layout->rank_base, layout->world_size};
  }
  return seat;
}

Status check_membership(std::uint32_t spares, std::optional<std::uint32_t> min_nodes, std::uint32_t nnodes,
                        bool task_shape) {
  const bool elastic = spares > 0 || min_nodes;
  if (elastic && task_shape)
    return fail(std::string(spares > 0 ? "--ddp-spares" : "--ddp-min-nodes") +
                " needs one task per node (the agent starts the workers and can move them to a spare), but this "
                "step runs several tasks per node; drop --ntasks-per-node (or -n)");
  if (spares > 0 && spares >= nnodes)
    return fail("--ddp-spares=" + std::to_string(spares) + " leaves no node for the workers of this " +
                std::to_string(nnodes) + "-node step; use at most " + std::to_string(nnodes - 1) +
                " (or ask for more nodes: srun -N" + std::to_string(spares + 1) + ")");
  if (min_nodes && *min_nodes > nnodes - spares)
    return fail("--ddp-min-nodes=" + std::to_string(*min_nodes) + " is more than the " +
                std::to_string(nnodes - spares) + " node(s) that run workers (" + std::to_string(nnodes) +
                " in the step" + (spares ? ", " + std::to_string(spares) + " of them spares" : std::string()) +
                "); use at most " + std::to_string(nnodes - spares));
  return Ok{};
}

}  // namespace ddp
