// The plugin's state in one process (srun, sbatch, or one slurmstepd). Slurm
// calls the plugin from one thread per process, so a single instance suffices.
#pragma once

#include <optional>
#include <string>

#include "ddp/plan.hpp"
#include "ddp/request.hpp"
#include "ddp/site_config.hpp"

namespace ddp::spank {

struct State {
  PluginArgs args;               // plugstack.conf words after the plugin path
  DdpRequest request;            // what the user asked for
  SiteConfig config;             // the site config, loaded on compute nodes only
  std::string agent_path;        // resolved: plugstack arg > site config > built-in
  std::optional<NodePlan> plan;  // this node's plan, worked out in user_init
  // In Slurm 22.05 an error returned from user_init does not fail srun, and
  // under sbatch it drains the node (see the notes on failing correctly). So
  // remote errors are kept here and returned from task_init, like pyxis does.
  std::optional<std::string> deferred_error;
};

State& state();

// Context entry points, one file each (pyxis's layout).
int options_register(spank_t sp);
int local_init_post_opt(spank_t sp);
int remote_init_post_opt(spank_t sp);
int remote_user_init(spank_t sp);
int remote_task_init(spank_t sp);

}  // namespace ddp::spank
