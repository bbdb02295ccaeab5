// Which node runs which group of workers (torchrun's GROUP_RANK) in an
// attempt, and what a lost node changes: spare nodes (--ddp-spares) and an
// elastic minimum (--ddp-min-nodes). Pure, so the coordinator's choices are
// tested without a cluster.
//
// A step of N nodes with K spares has N-K groups, held at first by nodes
// 0..N-K-1 (group g by node g); nodes N-K..N-1 wait. When the node holding a
// group is lost, the first spare that can run the group's workers takes the
// group over: same group rank, same ranks, so WORLD_SIZE and the data split do
// not change. Without such a spare, --ddp-min-nodes lets the run go on with
// one group fewer (the groups after it move down, WORLD_SIZE shrinks), down
// to M groups. Node 0 holds group 0 for good: it hosts the rendezvous and
// MASTER_ADDR, so its loss ends the run (the other agents lose the
// coordinator) and is never planned for here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp {

struct Roster {
  struct Group {
    std::uint32_t node = 0;     // the node that runs it (SLURM_NODEID order)
    std::uint32_t workers = 0;  // its worker count, fixed when the step began
    bool operator==(const Group&) const = default;
  };
  std::vector<Group> groups;            // by group rank
  std::vector<std::uint32_t> capacity;  // per node: the workers it can run (its JOIN)
  std::vector<bool> lost;               // per node: never used again in this step

  bool operator==(const Roster&) const = default;
};

// `capacity`: every node's worker count, in node order. Errors: K spares
// leave no group, or node 0 would be a spare.
Result<Roster> make_roster(std::vector<std::uint32_t> capacity, std::uint32_t spares);

// The group rank `node` holds, or nullopt (a spare, or lost).
std::optional<std::uint32_t> group_of(const Roster& roster, std::uint32_t node);
// Nodes neither lost nor holding a group.
std::vector<std::uint32_t> spare_nodes(const Roster& roster);
// Workers of every group: WORLD_SIZE.
std::uint64_t world_size(const Roster& roster);

// What the loss of one node changes.
struct RosterChange {
  enum class Kind {
    Unused,     // a spare (or an already lost node): no worker was there, nothing restarts
    Replaced,   // a spare took its group over
    Shrunk,     // its group was dropped; the groups after it moved down
    CannotGoOn  // no spare fits and the minimum is reached: the run ends
  };
  Kind kind = Kind::Unused;
  std::optional<std::uint32_t> group;  // the group the lost node held
  std::optional<std::uint32_t> spare;  // Replaced: the node that took it over
  std::string text;                    // what happened, for the log and the root cause
};

// Marks `node` lost and decides. `min_groups`: the fewest groups the run may
// go on with (--ddp-min-nodes; 0 or the group count: never shrink).
// `node_name(n)` names a node in `text` ("2 (host, addr)").
RosterChange lose_node(Roster& roster, std::uint32_t node, std::uint32_t min_groups,
                       const std::function<std::string(std::uint32_t)>& node_name);

// The workers a node runs in an attempt that START describes: the nodes of
// the groups in group order, and each group's worker count (comma-separated
// on the wire). nullopt: `node` holds no group (a spare: it waits).
struct GroupSeat {
  std::uint32_t group_rank = 0;
  std::uint32_t groups = 1;  // GROUP_WORLD_SIZE
  std::uint32_t workers = 0;
  std::uint32_t rank_base = 0;
  std::uint32_t world_size = 0;
  bool operator==(const GroupSeat&) const = default;
};
Result<std::optional<GroupSeat>> seat_of(const std::vector<std::uint32_t>& group_nodes,
                                         const std::vector<std::uint32_t>& group_workers, std::uint32_t node);

// Node-count checks that need the step's size: K spares must leave at least
// one group (and node 0 a worker node), M at most the group count; and the
// task shape (one Slurm task per worker) cannot keep spares or shrink, since
// Slurm starts its tasks.
Status check_membership(std::uint32_t spares, std::optional<std::uint32_t> min_nodes, std::uint32_t nnodes,
                        bool task_shape);

}  // namespace ddp
