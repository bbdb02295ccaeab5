// BadNodeHook= (ddp.conf(5)): the site's program, run as root on node 0 when
// a step ends, once for each bad node of the step (blamed twice, failed its
// health check, swapped after the pre-flight: doc/node-loss.md), so that the
// admin hears of it. Off unless the site names one.
//
// The verdict comes from the job's own agents, that is from the user, so it
// is handled as a claim (bad_node_fifo.hpp): only nodes of the job's
// allocation, as slurmctld has it, with a reason made plain text; the hook is
// told who claimed it; the plugin never drains a node itself, nor asks
// slurmctld to. What the hook does (mail, a ticket, a counter, a drain after
// N reports from distinct users) is the site's policy.
//
// It runs in slurm_spank_exit, in slurmstepd's own process, before slurmstepd
// tells slurmctld that the step is complete: the step ends no sooner than
// the hook. So every run of a step together gets kHookBudget, whatever the
// hook does (closes its output, ignores SIGTERM, leaves children running):
// at the deadline its whole process group (its session: it is started with
// setsid) is killed with SIGKILL and the nodes not yet reported are named in
// slurmd's log; when a run ends, what it left in its process group is killed
// too. Nothing waits without a bound. The program is opened and checked once
// (open_trusted_program) and each run is executed from that descriptor.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "bad_node_fifo.hpp"
#include "ddp/site/trusted_program.hpp"

namespace ddp::spank {

inline constexpr std::chrono::milliseconds kHookBudget{10000};  // all the runs of one step together
inline constexpr std::size_t kMaxLoggedRuns = 8;               // runs logged one by one; the rest in one line

// One run of the hook: what it is about (a node's name, for the log) and its
// environment (NAME=VALUE each; nothing else is passed).
struct HookRun {
  std::string label;
  std::vector<std::string> env;
};

// Runs `program` once for each of `runs`, in turn, stdin from /dev/null, all
// of them within `budget` (as above). Returns the lines for slurmd's log: at
// most kMaxLoggedRuns runs one by one (how it ended, the first 1 KiB it
// printed), then one line for the other runs, and one naming the runs the
// deadline left out.
std::vector<std::string> run_hook(const TrustedProgram& program, const std::vector<HookRun>& runs,
                                  std::chrono::milliseconds budget);

// slurm_spank_exit, root: runs `hook` for each bad node of `report` (above).
// Every problem goes to slurmd's log; nothing fails the step.
void run_bad_node_hook(const std::string& hook, const BadNodes& report);

}  // namespace ddp::spank
