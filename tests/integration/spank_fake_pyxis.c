/* pyxis's command-line interface, nothing else: registers --container-image
 * and --container-name as NVIDIA's pyxis does, and does nothing with them.
 * pyxis is not in Debian and enroot needs a kernel we cannot give the test
 * cluster, so this stands in for it in container_refusal.sh, which checks that
 * spank_ddp.so sees a container request that is another plugin's option. */
#include <slurm/spank.h>
#include <stddef.h>

SPANK_PLUGIN(ddp_fake_pyxis, 1);

static int ignore(int val, const char *optarg, int remote) {
  (void)val;
  (void)optarg;
  (void)remote;
  return 0;
}

struct spank_option spank_options[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH", "(test stand-in for pyxis) container image", 1, 0, ignore},
    {"container-name", "NAME", "(test stand-in for pyxis) container name", 1, 0, ignore},
    SPANK_OPTIONS_TABLE_END};

/* Slurm loads no plugin that exports no callback. */
int slurm_spank_init(spank_t sp, int ac, char **av) {
  (void)sp;
  (void)ac;
  (void)av;
  return 0;
}
