// Slurm's C headers, for C++.
//
// spank.h declares the slurm_spank_* callbacks outside its extern "C" block, so
// C++ would mangle our definitions and Slurm would never find them: include it
// inside extern "C". The slurm_* API used here (hostlists, node lookup) is not
// linked: slurmstepd and srun already carry it in libslurmfull.so, and a second
// copy of libslurm in the same process would duplicate Slurm's global state.
#pragma once

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}
