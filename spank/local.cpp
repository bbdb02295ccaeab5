// srun, salloc and sbatch (the local and allocator contexts), as the user.
#include <cstdlib>

#include "ddp/rdzv_protocol.hpp"
#include "log.hpp"
#include "state.hpp"

namespace ddp::spank {

namespace {

// srun: the step's rendezvous secret. It travels in the step's environment
// (SLURM_* variables survive --export=NONE), so only the job's own processes
// know it; the agents prove it to each other without sending it (see
// rdzv_protocol.hpp). spank_setenv() works only in the remote context, so it
// goes into srun's own environment now, before srun copies that environment
// for the step (later, in local_user_init, would be too late).
int make_step_secret() {
  const std::string secret = rdzv::random_hex(32);
  if (::setenv("SLURM_DDP_SECRET", secret.c_str(), 1) != 0) {
    error("cannot set SLURM_DDP_SECRET for the step");
    return -1;
  }
  return 0;
}

}  // namespace

int local_init_post_opt(spank_t) {
  // DDP_* variables fill in what no option said; srun checks them here, once,
  // before anything is allocated (the compute nodes read them again).
  auto env = apply_environment(state().request, [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  });
  if (!env) {
    error(env.error());
    return -1;
  }
  const auto status = validate(state().request);
  if (!status) {
    error(status.error());
    return -1;  // srun/sbatch stops here, before anything is allocated
  }
  if (spank_context() == S_CTX_LOCAL && state().request.active()) return make_step_secret();
  return 0;
}

}  // namespace ddp::spank
