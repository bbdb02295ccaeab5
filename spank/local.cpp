// srun, salloc and sbatch (the local and allocator contexts), as the user.
#include "log.hpp"
#include "state.hpp"

namespace ddp::spank {

int local_init_post_opt(spank_t) {
  const auto status = validate(state().request);
  if (status) return 0;
  error(status.error());
  return -1;  // srun/sbatch stops here, before anything is allocated
}

}  // namespace ddp::spank
