/* A second SPANK plugin for the launch tests (launch_path.sh), listed after
 * spank_ddp.so in the test cluster's plugstack.conf: its task_init leaves a
 * mark in the task's environment. Where spank_ddp.so prepends the agent to
 * the task's command (Slurm 23.11+), slurmstepd goes on to this plugin and
 * every worker sees the mark; where it execs the agent from its own task_init
 * (22.05, 23.02), this plugin never runs. */
#include <slurm/spank.h>

SPANK_PLUGIN(ddp_test_marker, 1);

int slurm_spank_task_init(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  spank_setenv(sp, "DDP_TEST_SECOND_PLUGIN", "ran", 1);
  return 0;
}
