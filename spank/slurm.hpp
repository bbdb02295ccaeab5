// Slurm's C headers, for C++, and the one place where the plugin meets the
// differences between the Slurm releases it builds for (22.05 to 26.05; CI
// builds it against Debian's 22.05, 24.11 and 26.05, and
// tests/slurm-releases/check.sh compiles it against SchedMD's tag of each
// release line by hand: doc/admin.md, "Slurm releases").
//
// spank.h declares the slurm_spank_* callbacks outside its extern "C" block, so
// C++ would mangle our definitions and Slurm would never find them: include it
// inside extern "C". The slurm_* API used here (hostlists, node lookup) is not
// linked: slurmstepd and srun already carry it in libslurmfull.so, and a second
// copy of libslurm in the same process would duplicate Slurm's global state.
#pragma once

#include <cerrno>
#include <cstdint>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#ifndef SLURM_VERSION_NUM
#error "slurm/slurm_version.h did not define SLURM_VERSION_NUM: is this Slurm older than 22.05?"
#endif
#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 5, 0)
#error "slurm-ddp needs Slurm 22.05 or newer"
#endif

// 23.11 added spank_prepend_task_argv(): the plugin can put the agent in
// front of the task's command instead of exec'ing it from task_init, so that
// everything slurmstepd does after task_init (TaskProlog, --task-prolog,
// resource limits, TMPDIR, later SPANK plugins) still happens.
#define DDP_SLURM_HAS_PREPEND_ARGV (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0))

namespace ddp::spank::slurm_compat {

// 23.11 made hostlist_t the struct itself, and the slurm_hostlist_* functions
// take a hostlist_t *; before, hostlist_t was the pointer. The handle is
// whatever slurm_hostlist_create returns, in every release.
using HostlistHandle = decltype(slurm_hostlist_create(nullptr));

// 24.11 removed slurm_get_errno(); every release stores its error codes in
// errno (slurm_seterrno), which is what slurm_get_errno() returned.
inline int last_error() { return errno; }

// spank_prepend_task_argv() where Slurm has it; ESPANK_NOT_AVAIL before 23.11.
inline spank_err_t prepend_task_argv(spank_t sp, int argc, const char* argv[]) {
#if DDP_SLURM_HAS_PREPEND_ARGV
  return spank_prepend_task_argv(sp, argc, argv);
#else
  (void)sp;
  (void)argc;
  (void)argv;
  return ESPANK_NOT_AVAIL;
#endif
}

// 26.05 renamed slurm_free_ctl_conf() (slurm_load_ctl_conf's counterpart) to
// slurm_free_conf().
inline void free_conf(slurm_conf_t* conf) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
  slurm_free_conf(conf);
#else
  slurm_free_ctl_conf(conf);
#endif
}

// 26.05's slurm_load_job() takes a slurm_step_id_t instead of the job id.
inline int load_job(job_info_msg_t** info, std::uint32_t job_id) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
  slurm_step_id_t id{};
  id.job_id = job_id;
  id.step_het_comp = NO_VAL;
  id.step_id = NO_VAL;
  return slurm_load_job(info, id, SHOW_DETAIL);
#else
  return slurm_load_job(info, job_id, SHOW_DETAIL);
#endif
}

// 25.11's slurm_get_job_steps() takes a slurm_step_id_t * instead of the
// update time and the job and step ids.
inline int get_job_step(job_step_info_response_msg_t** info, std::uint32_t job_id, std::uint32_t step_id) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
  slurm_step_id_t id{};
  id.job_id = job_id;
  id.step_het_comp = NO_VAL;
  id.step_id = step_id;
  return slurm_get_job_steps(&id, info, SHOW_ALL);
#else
  return slurm_get_job_steps(0, job_id, step_id, info, SHOW_ALL);
#endif
}

}  // namespace ddp::spank::slurm_compat
