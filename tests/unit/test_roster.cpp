#include "ddp/plan/roster.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {
std::string name(std::uint32_t node) { return std::to_string(node) + " (n" + std::to_string(node) + ")"; }
std::vector<std::uint32_t> nodes_of(const Roster& r) {
  std::vector<std::uint32_t> out;
  for (const auto& g : r.groups) out.push_back(g.node);
  return out;
}
}  // namespace

START_TEST(spares_are_the_last_nodes_and_hold_no_group) {
  const auto r = make_roster({4, 4, 4, 4}, 1);
  ck_assert(r.ok());
  ck_assert(nodes_of(*r) == (std::vector<std::uint32_t>{0, 1, 2}));
  ck_assert(spare_nodes(*r) == std::vector<std::uint32_t>{3});
  ck_assert_uint_eq(world_size(*r), 12);
  ck_assert(!group_of(*r, 3));
  ck_assert_uint_eq(*group_of(*r, 2), 2);
  CK_CONTAINS(make_roster({4, 4}, 2).error(), "leaves no node for the workers");
}
END_TEST

// A spare takes the lost node's group: same group rank, same world size.
START_TEST(a_spare_takes_over_the_lost_nodes_group) {
  auto r = *make_roster({2, 2, 2, 2, 2}, 2);
  const auto change = lose_node(r, 1, 0, name);
  ck_assert(change.kind == RosterChange::Kind::Replaced);
  ck_assert_uint_eq(*change.group, 1);
  ck_assert_uint_eq(*change.spare, 3);
  ck_assert(nodes_of(r) == (std::vector<std::uint32_t>{0, 3, 2}));
  ck_assert_uint_eq(world_size(r), 6);
  CK_CONTAINS(change.text, "spare node 3 (n3) takes over group 1 (2 worker(s)) from node 1 (n1); 1 spare(s) left");
  // A lost spare costs a spare, nothing else; losing a node twice changes nothing.
  const auto spare = lose_node(r, 4, 0, name);
  ck_assert(spare.kind == RosterChange::Kind::Unused);
  CK_CONTAINS(spare.text, "spare node 4 (n4) was lost; 0 spare(s) left");
  ck_assert(lose_node(r, 4, 0, name).kind == RosterChange::Kind::Unused);
  ck_assert(nodes_of(r) == (std::vector<std::uint32_t>{0, 3, 2}));
  // No spare left, not elastic: the run cannot go on, and the text says what would.
  const auto end = lose_node(r, 2, 0, name);
  ck_assert(end.kind == RosterChange::Kind::CannotGoOn);
  CK_CONTAINS(end.text, "no spare node left (--ddp-spares; --ddp-min-nodes=M would go on with fewer nodes)");
}
END_TEST

// A spare with fewer GPUs than the lost group's workers is passed over.
START_TEST(a_spare_too_small_for_the_group_is_passed_over) {
  auto r = *make_roster({8, 8, 4, 8}, 2);
  const auto change = lose_node(r, 1, 0, name);
  ck_assert(change.kind == RosterChange::Kind::Replaced);
  ck_assert_uint_eq(*change.spare, 3);
  auto small = *make_roster({8, 8, 4}, 1);
  const auto none = lose_node(small, 1, 0, name);
  ck_assert(none.kind == RosterChange::Kind::CannotGoOn);
  CK_CONTAINS(none.text, "no spare node left that can run 8 worker(s)");
}
END_TEST

// --ddp-min-nodes: the lost group is dropped, the later ones move down, down
// to the minimum.
START_TEST(without_spares_the_step_shrinks_to_its_minimum) {
  auto r = *make_roster({2, 3, 4, 5}, 0);
  const auto change = lose_node(r, 1, 2, name);
  ck_assert(change.kind == RosterChange::Kind::Shrunk);
  ck_assert(nodes_of(r) == (std::vector<std::uint32_t>{0, 2, 3}));
  ck_assert_uint_eq(world_size(r), 11);
  CK_CONTAINS(change.text, "no spare node left: going on with 3 node(s), 11 worker(s) (--ddp-min-nodes=2)");
  ck_assert(lose_node(r, 3, 2, name).kind == RosterChange::Kind::Shrunk);
  const auto end = lose_node(r, 2, 2, name);
  ck_assert(end.kind == RosterChange::Kind::CannotGoOn);
  CK_CONTAINS(end.text, "the step is at its minimum of 2 node(s) (--ddp-min-nodes)");
  ck_assert(nodes_of(r) == (std::vector<std::uint32_t>{0, 2}));
}
END_TEST

// What an agent makes of START: its group, ranks and the world; none for a spare.
START_TEST(a_node_finds_its_seat_in_start) {
  const auto seat = seat_of({0, 3, 2}, {2, 2, 4}, 2);
  ck_assert(seat.ok() && seat->has_value());
  ck_assert((**seat == GroupSeat{2, 3, 4, 4, 8}));
  const auto moved = seat_of({0, 3, 2}, {2, 2, 4}, 3);
  ck_assert((**moved == GroupSeat{1, 3, 2, 2, 8}));
  const auto spare = seat_of({0, 3, 2}, {2, 2, 4}, 1);
  ck_assert(spare.ok() && !spare->has_value());
  CK_CONTAINS(seat_of({0, 1}, {2}, 0).error(), "named 2 group(s) but gave 1 worker count(s)");
  CK_CONTAINS(seat_of({0, 1, 1}, {2, 2, 2}, 1).error(), "two groups");
}
END_TEST

START_TEST(membership_options_are_checked_against_the_step) {
  ck_assert(check_membership(1, 1, 3, false).ok());
  ck_assert(check_membership(0, std::nullopt, 1, true).ok());
  CK_CONTAINS(check_membership(3, std::nullopt, 3, false).error(),
              "--ddp-spares=3 leaves no node for the workers of this 3-node step; use at most 2");
  CK_CONTAINS(check_membership(1, 3, 3, false).error(),
              "--ddp-min-nodes=3 is more than the 2 node(s) that run workers (3 in the step, 1 of them spares)");
  CK_CONTAINS(check_membership(1, std::nullopt, 3, true).error(), "--ddp-spares needs one task per node");
  CK_CONTAINS(check_membership(0, 1, 3, true).error(), "--ddp-min-nodes needs one task per node");
}
END_TEST

Suite* roster_suite() {
  return make_suite("roster", {spares_are_the_last_nodes_and_hold_no_group, a_spare_takes_over_the_lost_nodes_group,
                               a_spare_too_small_for_the_group_is_passed_over,
                               without_spares_the_step_shrinks_to_its_minimum, a_node_finds_its_seat_in_start,
                               membership_options_are_checked_against_the_step});
}
