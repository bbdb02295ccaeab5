/* A stand-in for a user's own srun build (root_inputs.sh): munge proves who
 * sent a launch message, not which program wrote it, so every variable of a
 * step's environment, SLURM_STEP_NODELIST included, is whatever the user
 * chose. Listed in the launch-test cluster's plugstack.conf; in slurmstepd it
 * reads DDP_TEST_FORGE=NAME:KIND from the job's environment and sets NAME to
 * a value of that kind before spank_ddp.so reads the environment. NAME must
 * be in the environment already (srun's variable, or one the test sets):
 * its entry is replaced with Slurm's own env_array_overwrite(), since
 * spank_setenv() refuses values over 128 KiB and a launch message has no such
 * limit. Kinds:
 *   ranges  n[1,1,...]: 262,145 ranges, where Slurm 22.05's parser calls fatal()
 *   groups  x[0-1999]x[0-1999]x[0-1999]: 27 bytes Slurm multiplies slowly
 *   long    2 MiB of digits */
#include <slurm/spank.h>
#include <stdlib.h>
#include <string.h>

SPANK_PLUGIN(ddp_test_forged_env, 1);

/* libslurmfull's (slurmstepd's), Slurm 22.05 to 26.05: replaces NAME's entry
 * in place (the array grows only for a new name). */
extern int slurm_env_array_overwrite(char ***array, const char *name, const char *value) __attribute__((weak));

static char *forged_value(const char *kind) {
  if (strcmp(kind, "groups") == 0) return strdup("x[0-1999]x[0-1999]x[0-1999]");
  const size_t n = strcmp(kind, "ranges") == 0 ? 262145 : 2u << 20;
  char *value = malloc(2 * n + 3);
  if (!value) return NULL;
  char *p = value;
  if (strcmp(kind, "ranges") == 0) {
    *p++ = 'n';
    *p++ = '[';
    for (size_t i = 0; i < n; ++i) {
      if (i) *p++ = ',';
      *p++ = '1';
    }
    *p++ = ']';
  } else {
    memset(p, '1', n);
    p += n;
  }
  *p = '\0';
  return value;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
  (void)ac;
  (void)av;
  char request[256];
  if (spank_context() != S_CTX_REMOTE ||
      spank_getenv(sp, "DDP_TEST_FORGE", request, sizeof request) != ESPANK_SUCCESS)
    return 0;
  char *colon = strchr(request, ':');
  if (!colon) return 0;
  *colon = '\0';
  char *value = forged_value(colon + 1);
  char **env = NULL;
  if (value && slurm_env_array_overwrite && spank_get_item(sp, S_JOB_ENV, &env) == ESPANK_SUCCESS && env) {
    char ***job_env = &env;  /* the job's own array: the entry exists, so it is not moved */
    slurm_env_array_overwrite(job_env, request, value);
  }
  free(value);
  return 0;
}
