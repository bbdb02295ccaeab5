// Every message the plugin prints starts with "ddp: " (the plugin's name), so a user reading
// srun's stderr and an admin grepping slurmd.log both know who spoke.
#pragma once

#include <string>

#include "slurm.hpp"

namespace ddp::spank {

// To the user's terminal and the daemon log: the error path.
inline void error(const std::string& message) { slurm_error("ddp: %s", message.c_str()); }
// To the user's terminal without "error:" (Slurm's slurm_spank_log).
inline void say(const std::string& message) { slurm_spank_log("ddp: %s", message.c_str()); }
inline void verbose(const std::string& message) { slurm_verbose("ddp: %s", message.c_str()); }

}  // namespace ddp::spank
