// The --ddp* options, for srun, salloc and sbatch (and #SBATCH lines).
#include <iterator>

#include "log.hpp"
#include "state.hpp"

namespace ddp::spank {

namespace {

// One callback for every option; `val` is the index into kOptions.
int on_option(int val, const char* optarg, int remote) {
  try {
    if (val < 0 || val >= int(std::size(kOptions))) return -1;
    const auto status = apply_option(state().request, kOptions[val].name, optarg);
    if (status) return 0;
    // In srun/sbatch this stops the command before anything is allocated. On a
    // compute node a callback failure is only logged by Slurm; srun already
    // checked the same value, so remember it for task_init just in case.
    if (remote)
      state().defer(status.error(), false);
    else
      error(status.error());
    return -1;
  } catch (...) {
    return -1;  // no exception may cross into Slurm's C code
  }
}

}  // namespace

int options_register(spank_t sp) {
  // Registered from slurm_spank_init in every context: a static spank_options
  // table is ignored in the allocator context (sbatch/salloc).
  for (int i = 0; i < int(std::size(kOptions)); ++i) {
    const auto& spec = kOptions[i];
    spank_option option{};
    option.name = const_cast<char*>(spec.name);
    option.arginfo = const_cast<char*>(spec.arginfo);
    option.has_arg = spec.arginfo == nullptr ? 0 : (spec.optional_arg ? 2 : 1);
    option.val = i;
    option.cb = on_option;
    option.usage = const_cast<char*>(spec.usage);
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      error(std::string("cannot register option --") + spec.name +
            "; another plugin in plugstack.conf may already use that name");
      return -1;
    }
  }
  return 0;
}

}  // namespace ddp::spank
