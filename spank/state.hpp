// PluginState: what the plugin keeps between Slurm's callbacks in one process
// (srun, sbatch, salloc, or one slurmstepd). Slurm calls the plugin from one
// thread per process, so a single instance suffices.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ddp/node/port_claim.hpp"
#include "ddp/plan/request.hpp"
#include "ddp/plan/step_plan.hpp"
#include "ddp/site/site_config.hpp"
#include "ddp/wire/node_plan.hpp"
#include "bad_node_fifo.hpp"

namespace ddp::spank {

// An error found before task_init. In Slurm 22.05 an error returned from
// user_init does not fail srun, and under sbatch it drains the node (see the
// notes on failing correctly), so it is kept here and returned from task_init,
// as pyxis does.
struct DeferredError {
  std::string message;
  // false: the same on every node, reported by node 0 only (once per step);
  // true: about this node, reported by every node that has it.
  bool node_specific = false;
};

struct PluginState {
  PluginArgs args;         // plugstack.conf words after the plugin path
  std::optional<std::string> args_error;  // a mistake in them: stops --ddp steps only
  DdpRequest request;      // what the user asked for
  SiteConfig config;       // the site config, loaded on compute nodes only
  Settings settings;       // the config resolved for this node and partition
  std::string agent_path;  // plugstack agent= > site config Agent= > built-in
  Shape shape = Shape::None;  // agent, task or batch (ddp/plan/step_plan.hpp), once planned
  std::optional<std::string> master_addr;  // node 0's NodeAddr, looked up in init_post_opt (root)
  std::optional<std::string> master_error;  // why it could not be: an error only if --ddp is on here
  std::optional<std::string> turned_off;    // the site's kill switch is off for this step: the line to say
  std::optional<NodePlan> plan;            // this node's plan, worked out in user_init
  PortClaim master_claim;                  // task shape, node 0: MASTER_PORT, for slurmstepd's life
  std::optional<ReportFifo> report_fifo;   // node 0 of a launched step: the bad nodes (bad_node_fifo.hpp)
  std::optional<DeferredError> error;
  std::vector<std::string> warnings;  // said once per node from task_init (binding problems)

  void defer(std::string message, bool node_specific) {
    if (!error) error = DeferredError{std::move(message), node_specific};
  }
};

PluginState& state();

// Entry points, one file per process the plugin runs in (pyxis's layout):
// options.cpp in all three; client.cpp in srun, sbatch and salloc;
// slurmstepd.cpp in slurmstepd.
int options_register(spank_t sp);
int client_init_post_opt(spank_t sp);
int slurmstepd_init_post_opt(spank_t sp);
int slurmstepd_user_init(spank_t sp);
int slurmstepd_task_init(spank_t sp);
int slurmstepd_exit(spank_t sp);

}  // namespace ddp::spank
