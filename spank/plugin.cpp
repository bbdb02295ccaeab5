// spank_ddp.so: the SPANK entry points. Each callback is a thin dispatcher on
// spank_context() into one file per process the plugin runs in (client.cpp for
// srun, sbatch and salloc; slurmstepd.cpp for slurmstepd), and catches
// everything: no C++ exception may unwind through Slurm's C frames.
#include <exception>
#include <string_view>
#include <vector>

#include "log.hpp"
#include "state.hpp"

// SPANK_PLUGIN defines const arrays; in C++ a namespace-scope const has internal
// linkage, so without these declarations the symbols would not be exported and
// Slurm would reject the file as "not a Slurm plugin" (visible only with -v).
extern "C" {
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(ddp, 1)
}

namespace ddp::spank {

PluginState& state() {
  static PluginState instance;
  return instance;
}

namespace {

template <class F>
int guarded(const char* callback, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    error(std::string(callback) + ": internal error: " + e.what());
  } catch (...) {
    error(std::string(callback) + ": internal error");
  }
  return -1;
}

int init(spank_t sp, int ac, char** av) {
  std::vector<std::string_view> words(av, av + ac);
  auto args = parse_plugin_args(words);
  if (args) {
    state().args = *args;
  } else {
    // An admin's mistake on the plugstack.conf line stops --ddp steps, with
    // this message, and nothing else: failing init would take every srun and
    // sbatch down with it, and slurmd's own context and the prologs (a
    // configless site ships the line to every node at reconfigure). slurmd's
    // log shows it at once.
    state().args_error = args.error();
    if (spank_context() == S_CTX_SLURMD) error(args.error());
  }
  switch (spank_context()) {
    case S_CTX_LOCAL:
    case S_CTX_ALLOCATOR:
    case S_CTX_REMOTE:
      return options_register(sp);
    default:  // slurmd, job_script: nothing to do
      return 0;
  }
}

}  // namespace

}  // namespace ddp::spank

using namespace ddp::spank;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", [&] { return init(sp, ac, av); });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guarded("init_post_opt", [&] {
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_ALLOCATOR:
        return client_init_post_opt(sp);
      case S_CTX_REMOTE:
        return slurmstepd_init_post_opt(sp);
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  return guarded("user_init", [&] { return slurmstepd_user_init(sp); });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", [&] { return slurmstepd_task_init(sp); });
}

extern "C" int slurm_spank_exit(spank_t sp, int, char**) {
  return guarded("exit", [&] { return spank_context() == S_CTX_REMOTE ? slurmstepd_exit(sp) : 0; });
}
