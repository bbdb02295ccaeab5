// Every message the plugin prints starts with "ddp: " (the plugin's name), so a user reading
// srun's stderr and an admin grepping slurmd.log both know who spoke.
//
// Messages quote values the user chose (options, SDDP_* variables, the step's
// environment), and on a compute node they land in slurmd's log, written as
// root: printable() keeps each message on one line of bounded length, so no
// user can forge log lines or flood the log through the plugin.
#pragma once

#include <string>

#include "ddp/base/parse.hpp"
#include "slurm.hpp"

namespace ddp::spank {

// To the user's terminal and the daemon log: the error path.
inline void error(const std::string& message) { slurm_error("ddp: %s", printable(message).c_str()); }
// To the user's terminal without "error:" (Slurm's slurm_spank_log).
inline void say(const std::string& message) { slurm_spank_log("ddp: %s", printable(message).c_str()); }
inline void verbose(const std::string& message) { slurm_verbose("ddp: %s", printable(message).c_str()); }
// To the daemon log only (slurmd.log on a compute node): what the admin must fix.
inline void for_admin(const std::string& message) { slurm_info("ddp: %s", printable(message).c_str()); }

}  // namespace ddp::spank
