// srun, salloc and sbatch (the local and allocator contexts), as the user.
#include <cstdlib>

#include "log.hpp"
#include "state.hpp"

namespace ddp::spank {

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
  if (status) return 0;
  error(status.error());
  return -1;  // srun/sbatch stops here, before anything is allocated
}

}  // namespace ddp::spank
