// What node 0's coordinator prints beyond the verdict: the step's summary
// (--ddp-verbose) and who is missing when the rendezvous times out.
#include <spdlog/spdlog.h>

#include "rendezvous/coordinator.hpp"

namespace ddp::agent {

// One summary for the whole step, from node 0 (--ddp-verbose): at the start,
// and again when a lost node's group has moved to a spare or been dropped.
void Coordinator::print_summary() const {
  const auto& groups = roster_->groups;
  spdlog::info("step {}: attempt {}: {} node(s), {} worker(s), MASTER_ADDR={} MASTER_PORT={}, rendezvous port {}",
               config_.run_id, attempt_, groups.size(), world_size(*roster_), config_.master_addr, master_claim_.port(),
               gate_.port());
  std::uint64_t rank = 0;
  for (std::uint32_t g = 0; g < groups.size(); ++g) {
    const auto& n = nodes_[groups[g].node];
    const std::uint32_t workers = groups[g].workers;
    spdlog::info("  node {} ({}, {}): group {}, ranks {}-{}", groups[g].node, n.host, n.addr, g, rank,
                 rank + workers - 1);
    for (std::uint32_t local = 0; local < workers; ++local, ++rank)
      spdlog::info("    rank {}: {}", rank,
                   describe_placement(local < n.workers.size() ? n.workers[local] : WorkerPlacement{}));
  }
  for (const auto spare : spare_nodes(*roster_))
    spdlog::info("  node {} ({}, {}): spare", spare, nodes_[spare].host, nodes_[spare].addr);
  for (std::uint32_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].lost) spdlog::info("  node {}: lost, not used again", node_name(i));
}

// The cause travels in one DONE line (16 KiB at most): name the missing
// nodes (the first 50 in full), count the ones that arrived.
void Coordinator::rendezvous_timed_out() {
  std::string missing;
  std::size_t missing_count = 0, arrived_count = 0;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].joined)
      ++arrived_count;
    else if (++missing_count <= 50)
      missing += ", " + node_name(i);
  }
  if (missing_count > 50) missing += " and " + std::to_string(missing_count - 50) + " more";
  finish_setup("rendezvous timed out after " + std::to_string(config_.rdzv_timeout.count() / 1000) +
               " s: " + std::to_string(missing_count) + " node(s) did not arrive: " + missing.substr(2) + " (" +
               std::to_string(arrived_count) + " of " + std::to_string(nodes_.size()) +
               " arrived); each missing node's agent says what it tried");
}

}  // namespace ddp::agent
