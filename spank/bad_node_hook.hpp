// BadNodeHook= (ddp.conf(5)): the site's program, run as root on node 0 when
// a step ends, once for each bad node of the step (blamed twice, failed its
// health check, swapped after the pre-flight: doc/node-loss.md), so that the
// admin hears of it. Off unless the site names one.
//
// The verdict comes from the job's own agents, that is from the user, so it
// is handled as a claim (bad_node_fifo.hpp): only nodes of the job's
// allocation, as slurmctld has it, with a reason of plain text; the hook is
// told who claimed it; the plugin never drains a node itself, nor asks
// slurmctld to. What the hook does (mail, a ticket, a counter, a drain after
// N reports from distinct users) is the site's policy.
#pragma once

#include <string>

#include "bad_node_fifo.hpp"

namespace ddp::spank {

// slurm_spank_exit, root: runs `hook` for each bad node (10 s each at
// most; what it prints goes to slurmd's log). Every problem goes to slurmd's
// log; nothing fails the step.
void run_bad_node_hook(const std::string& hook, const BadNodes& report);

}  // namespace ddp::spank
