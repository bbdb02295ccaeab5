// What the user asked for with the --ddp* options. Pure: the SPANK glue feeds
// option callbacks in here; the same code validates srun's command line early
// and re-reads the values on the compute nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/bounds.hpp"
#include "ddp/base/mode.hpp"
#include "ddp/base/result.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

struct DdpRequest {
  bool enabled = false;    // --ddp or any option that implies it
  bool opted_out = false;  // --no-ddp: wins over everything, also inherited --ddp
  Mode mode = Mode::Auto;
  std::optional<std::uint32_t> gpus;   // --ddp-gpus=N
  std::optional<std::uint32_t> procs;  // --ddp-procs=N
  std::optional<std::uint16_t> port;   // --ddp-port=PORT
  std::uint32_t restarts = 0;          // --ddp-restarts=N
  bool verbose = false;                // --ddp-verbose
  std::optional<bool> requeue;         // --ddp-requeue / SDDP_REQUEUE=0|1; unset: the site's Requeue=
  std::optional<std::uint32_t> hang_timeout_s;  // --ddp-hang-timeout=SECONDS (0: off); unset: the site's
  std::uint32_t spares = 0;            // --ddp-spares=K: the step's last K nodes wait, to replace a lost one
  std::optional<std::uint32_t> min_nodes;  // --ddp-min-nodes=M: without spares, go on down to M nodes
  std::optional<StragglerAction> stragglers;  // --ddp-stragglers=report|swap|off; unset: report
  std::optional<PreflightAction> preflight;   // --ddp-preflight=check|swap|off; unset: the site's Preflight=
  std::uint32_t given = 0;             // bit i: kOptions[i] came from the command line (--ddp: with a MODE)

  bool active() const { return enabled && !opted_out; }
  bool operator==(const DdpRequest&) const = default;
};

// The options the plugin registers, by their name without the leading "--".
// One table so the SPANK glue, the usage text and the tests agree.
struct OptionSpec {
  const char* name;
  const char* arginfo;  // nullptr: a flag
  bool optional_arg;    // --ddp[=MODE]
  const char* usage;
};
inline constexpr OptionSpec kOptions[] = {
    {"ddp", "MODE", true,
     "[ddp] Run the step as multi-node data-parallel training: one worker per GPU "
     "(MODE=gpu), --ddp-procs workers per node (MODE=cpu), or gpu when the step has GPUs (auto, default)"},
    {"ddp-gpus", "N", false, "[ddp] Workers per node, one GPU each (default: every GPU of the step). Implies --ddp"},
    {"ddp-procs", "N", false, "[ddp] Workers per node in CPU mode (default 1). Implies --ddp"},
    {"no-ddp", nullptr, false, "[ddp] Run this step without DDP, even if the job was submitted with --ddp"},
    {"ddp-port", "PORT", false, "[ddp] MASTER_PORT for this step instead of one node 0 picks from PortRange"},
    {"ddp-restarts", "N", false, "[ddp] Restart all workers on every node together up to N times after a failure"},
    {"ddp-verbose", nullptr, false, "[ddp] Print the plan (ranks, addresses, ports, binding) of every node"},
    {"ddp-requeue", nullptr, false,
     "[ddp] On Slurm's warning signal (sbatch --signal=USR1@SECONDS: time limit, preemption) let the workers "
     "save, then requeue the job; the requeued job resumes from its newest snapshot. Batch jobs only"},
    {"ddp-hang-timeout", "SECONDS", false,
     "[ddp] A worker that shows no progress for SECONDS (DDP_PROGRESS_FILE not touched; ddp-train touches it "
     "every step) is a hang: its stack is dumped and the job stops, naming it. 0: off"},
    {"ddp-spares", "K", false,
     "[ddp] Keep the step's last K nodes as spares: they start no workers, and one takes a lost node's place "
     "(same ranks) while every worker restarts from its newest snapshot. Needs srun --no-kill"},
    {"ddp-min-nodes", "M", false,
     "[ddp] When a node is lost and no spare is left, go on with fewer nodes, down to M (WORLD_SIZE shrinks). "
     "Needs srun --no-kill"},
    {"ddp-stragglers", "report|swap|off", false,
     "[ddp] A node whose workers hold the others back (busy while the others wait at the collectives) is named "
     "within about 40 s when its busiest worker is busy most of the time, later or never when that is near 60% "
     "(report, default); swap also takes it out: a spare takes its place and every worker restarts, "
     "or the job stops. off: not watched"},
    {"ddp-preflight", "check|swap|off", false,
     "[ddp] Before any worker starts, time a GEMM on every node (one node per host at a time) and each node's "
     "transfer to node 0; a node at least 1.5x slower than the others' median is named (check), or taken out "
     "for a spare (swap: --ddp-spares, else the job stops with the figures). Default: the site's, else off"},
};

// Environment equivalents: under --ddp (on the command line, in #SBATCH, or
// inherited from sbatch/salloc), SDDP_* variables fill in what no option
// said (SDDP_MODE: the mode a bare --ddp leaves open, or off). They never
// turn DDP on, and without --ddp nothing reads them, so no variable changes
// or fails a job that did not ask for DDP.
//   SDDP_MODE=auto|gpu|cpu|off  SDDP_GPUS=N  SDDP_PROCS=N  SDDP_PORT=PORT
//   SDDP_RESTARTS=N  SDDP_VERBOSE=0|1  SDDP_REQUEUE=0|1  SDDP_HANG_TIMEOUT=S
//   SDDP_SPARES=K  SDDP_MIN_NODES=M  SDDP_STRAGGLERS=report|swap|off
//   SDDP_PREFLIGHT=check|swap|off
// `retired` is the name the plugin read before 0.4.0 (training scripts use
// DDP_PORT and the like for their own purposes), which it reads no more;
// nullptr where that name is also one the agent sets for the workers
// (DDP_REQUEUE), so its presence says nothing about the user.
struct EnvEquivalent {
  const char* variable;
  const char* option;
  const char* retired;
};
inline constexpr EnvEquivalent kEnvEquivalents[] = {
    {"SDDP_MODE", "ddp", "DDP_MODE"},
    {"SDDP_GPUS", "ddp-gpus", "DDP_GPUS"},
    {"SDDP_PROCS", "ddp-procs", "DDP_PROCS"},
    {"SDDP_PORT", "ddp-port", "DDP_PORT"},
    {"SDDP_RESTARTS", "ddp-restarts", "DDP_RESTARTS"},
    {"SDDP_VERBOSE", "ddp-verbose", "DDP_VERBOSE"},
    {"SDDP_REQUEUE", "ddp-requeue", nullptr},
    {"SDDP_HANG_TIMEOUT", "ddp-hang-timeout", "DDP_HANG_TIMEOUT"},
    {"SDDP_SPARES", "ddp-spares", "DDP_SPARES"},
    {"SDDP_MIN_NODES", "ddp-min-nodes", "DDP_MIN_NODES"},
    {"SDDP_STRAGGLERS", "ddp-stragglers", "DDP_STRAGGLERS"},
    {"SDDP_PREFLIGHT", "ddp-preflight", "DDP_PREFLIGHT"},
};

// Looks a variable up: its value, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;

// Applies one option as Slurm delivers it: `value` is nullptr for a flag given
// on the command line and the literal "(null)" for a flag or an optional
// argument that sbatch/salloc exported to the steps. Idempotent: remote
// callbacks run twice with the same value.
Status apply_option(DdpRequest& request, std::string_view option, const char* value);

// Checks that need no node: contradictions between options. srun runs it before
// anything is allocated, so a typo costs the user seconds, not a queue wait.
Status validate(const DdpRequest& request);

// Applies the SDDP_* variables for every option the command line did not give,
// only when the request is active (--ddp on, no --no-ddp); otherwise it reads
// nothing. A malformed value is an error naming the variable and the fix.
Status apply_environment(DdpRequest& request, const EnvLookup& lookup);

// The one warning line for retired names still set (before 0.4.0 the plugin
// read DDP_PROCS and the like), e.g. "DDP_PROCS, DDP_RESTARTS are not read
// any more: set SDDP_PROCS, SDDP_RESTARTS"; nullopt when none is set. For the
// client commands under --ddp only: a job without --ddp has nothing to learn.
std::optional<std::string> retired_variables_warning(const EnvLookup& lookup);

// Refuses a second launcher in the agent shape: the agent already starts the
// workers, so `srun --ddp torchrun ...` would start workers x workers.
// `argv` is the step's command line; `local_rank_set`: LOCAL_RANK is already in
// the step's environment.
Status check_not_a_launcher(const std::vector<std::string>& argv, bool local_rank_set);

// Refuses a container plugin's request (pyxis: --container-image or
// --container-name, or its PYXIS_CONTAINER_* variables) in the agent shape.
// pyxis joins the container in its own task_init and leaves the command alone,
// so the agent would run outside the container (Slurm 22.05/23.02: our exec
// comes first) or be looked for inside the image (23.11+: the prepended argv
// runs after pyxis). The task shape works: each task is one worker, started
// by Slurm inside the container. `container` names the request as the user
// gave it ("--container-image=nvcr.io/nvidia/pytorch:24.05"), empty if none.
Status check_no_container_plugin(const std::string& container, bool task_shape);

// --no-kill (-k) among the words of a Slurm command line (srun's, sbatch's, or
// an #SBATCH line's): "-k", "--no-kill", "--no-kill=...", or a cluster of
// srun's flag letters ending in k ("-lk"). Any word counts, the program's
// own included: a false "yes" only spares a message.
bool asks_no_kill(const std::vector<std::string>& words);

// --ddp-spares and --ddp-min-nodes need a step that outlives a lost node:
// srun --no-kill (`no_kill`: asks_no_kill on srun's words, or SLURM_NO_KILL
// set). Without it Slurm kills the whole step once it declares the lost node
// DOWN, with the training that resumed meanwhile.
Status check_no_kill(const DdpRequest& request, bool no_kill);

// The value of the last --signal among the words of sbatch's command line and
// #SBATCH lines ("--signal=X", "--signal X"), nullopt if none.
std::optional<std::string> signal_option(const std::vector<std::string>& words);

// --ddp-requeue against the job's --signal ([{R|B}:]SIG[@SECONDS], as sbatch
// takes it): the agents requeue on Slurm's USR1 or USR2 warning, which only
// --signal asks for, and B: sends to the batch shell alone. Ok when it fits;
// otherwise why the requeue would never come by itself, with the fix. Only
// a warning for the caller: a USR1 sent by hand (scancel --signal) still works.
Status check_requeue_signal(const DdpRequest& request, const std::optional<std::string>& signal);

}  // namespace ddp
