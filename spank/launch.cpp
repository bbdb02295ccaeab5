#include "launch.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ddp/node/affinity.hpp"
#include "ddp/node/descriptors.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/node/port_claim.hpp"
#include "ddp/plan/worker_env.hpp"
#include "ddp/plan/workers.hpp"
#include "log.hpp"

namespace ddp::spank {

namespace {

int local_task(spank_t sp) {
  int id = 0;
  spank_get_item(sp, S_TASK_ID, &id);
  return id;
}

void say_plan(const NodePlan& plan) {
  if (!plan.verbose) return;
  if (plan.node_rank == 0)
    say("step " + plan.run_id + ": " + std::to_string(plan.nnodes) + " node(s), " + std::to_string(plan.world_size) +
        " " + std::string(to_string(plan.mode)) + " worker(s), MASTER_ADDR=" + plan.master_addr +
        " MASTER_PORT=" + std::to_string(plan.master_port) +
        ", stop grace " + std::to_string(plan.stop_grace_ms) + " ms" +
        (plan.spares ? ", " + std::to_string(plan.spares) + " spare node(s)" : std::string()) +
        (plan.min_nodes ? ", down to " + std::to_string(plan.min_nodes) + " node(s)" : std::string()));
  if (plan.node_rank >= plan.groups) {
    say("node " + std::to_string(plan.node_rank) + ": spare, starts no workers until a lost node's place is its");
    return;
  }
  for (std::uint32_t i = 0; i < plan.nproc; ++i) {
    std::string line = "node " + std::to_string(plan.node_rank) + " worker " + std::to_string(i) + " (rank " +
                       std::to_string(plan.rank_base + i) + ")";
    if (i < plan.placements.size()) line += " " + describe_placement(plan.placements[i]);
    say(line);
  }
}

// In the task's process, before the exec of the agent or of the task-shape
// worker: descriptors slurmstepd left open must not leak into the user's
// processes (close_range(), or where the kernel or a seccomp filter refuses
// it, a walk of /proc/self/fd).
Status close_stepd_descriptors() {
  if (cloexec_from(3)) return Ok{};
  return fail("cannot close slurmstepd's descriptors before the user's program starts (close_range() and "
              "/proc/self/fd both failed): is /proc mounted in the job's namespace?");
}

}  // namespace

Status export_batch_env(spank_t sp, const NodePlan& plan) {
  // Overwrite: with --ddp these are the job's, not stale values from the
  // submitting shell.
  const std::pair<const char*, std::string> vars[] = {
      {"MASTER_ADDR", plan.master_addr},
      {"MASTER_PORT", std::to_string(plan.master_port)},
      {"DDP_NNODES", std::to_string(plan.nnodes)},
  };
  for (const auto& [name, value] : vars)
    if (spank_setenv(sp, name, value.c_str(), 1) != ESPANK_SUCCESS) return fail(std::string("cannot set ") + name);
  if (plan.nproc > 0) spank_setenv(sp, "DDP_NPROC_PER_NODE", std::to_string(plan.nproc).c_str(), 1);
  if (plan.verbose)
    say("batch script: MASTER_ADDR=" + plan.master_addr + " MASTER_PORT=" + std::to_string(plan.master_port) +
        " DDP_NNODES=" + std::to_string(plan.nnodes) +
        (plan.nproc ? " DDP_NPROC_PER_NODE=" + std::to_string(plan.nproc) : std::string()));
  return Ok{};
}

Status become_worker(spank_t sp, const NodePlan& plan) {
  const int local = local_task(sp);
  if (local == 0) {
    say_plan(plan);
  }
  char** envp = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS) return fail("Slurm did not give the task's environment");
  const Environment base = Environment::from_envp(envp);
  // The agents' rendezvous secret (made by srun) is theirs, not the workers':
  // in this shape there are no agents, and a worker that submits a job would
  // otherwise hand it to slurmctld's state files with its environment.
  if (base.has("SLURM_DDP_SECRET")) spank_unsetenv(sp, "SLURM_DDP_SECRET");
  if (plan.mode == Mode::Gpu) {
    const auto visible = base.get("CUDA_VISIBLE_DEVICES").value_or("");
    const auto count = visible.empty() ? 0 : std::count(visible.begin(), visible.end(), ',') + 1;
    if (auto ok = check_task_gpu_view(std::size_t(count), std::uint32_t(local), plan.nproc,
                                      base.get("SDDP_ONE_GPU_PER_WORKER") == "1");
        !ok)
      return ok;
  }
  const auto route = route_to(plan.master_addr);
  const auto env =
      worker_environment(base, plan, planned_layout(plan), std::uint32_t(local), route ? route->interface : "");
  for (const auto& [name, value] : env.vars()) {
    const auto old = base.get(name);
    if (old && *old == value) continue;
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) return fail("cannot set " + name);
  }
  if (std::size_t(local) < plan.placements.size() && !plan.placements[local].cpus.empty()) {
    if (auto pinned = pin_to(plan.placements[local].cpus); !pinned)
      say("worker " + std::to_string(plan.rank_base + local) + " left unbound: " + pinned.error());
  }
  return close_stepd_descriptors();
}

Status launch_agent(spank_t sp, const std::string& agent_path, const NodePlan& plan) {
  if (::access(agent_path.c_str(), X_OK) != 0)
    return fail("cannot execute the agent " + agent_path + ": " + std::strerror(errno) +
                "; install ddp-agent there or set agent=PATH on the spank_ddp.so line in plugstack.conf");
  // (node 0's agent claims the step's ports, and prints the whole step's plan
  // once every node has joined)

  Environment plan_env;
  write_plan(plan, plan_env);
  for (const auto& [name, value] : plan_env.vars())
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
      return fail("cannot set " + name + " in the task's environment");

  // Slurm 23.11 and later: the agent goes in front of the task's command
  // (`ddp-agent --plan-from-env -- <command>`), and slurmstepd goes on as for
  // any task: TaskProlog and --task-prolog, resource limits, TMPDIR, the
  // SPANK plugins after this one (a container plugin among them), then its
  // own exec.
  if (DDP_SLURM_HAS_PREPEND_ARGV) {
    const char* prefix[] = {agent_path.c_str(), "--plan-from-env", "--"};
    const spank_err_t rc = slurm_compat::prepend_task_argv(sp, 3, prefix);
    if (rc == ESPANK_SUCCESS) return Ok{};
    return fail(std::string("cannot put the agent in front of the task's command: spank_prepend_task_argv: ") +
                spank_strerror(rc));
  }

  int argc = 0;
  char** argv = nullptr;
  char** envp = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || argc < 1)
    return fail("Slurm did not give the step's command line or environment");
  std::vector<char*> agent_argv;
  std::string path = agent_path;
  agent_argv.push_back(path.data());
  agent_argv.push_back(const_cast<char*>("--plan-from-env"));
  agent_argv.push_back(const_cast<char*>("--"));
  agent_argv.insert(agent_argv.end(), argv, argv + argc);
  agent_argv.push_back(nullptr);

  // Slurm 22.05 and 23.02 have no spank_prepend_task_argv(), so the plugin
  // execs the agent itself, as the user, in the task's own process. What that
  // skips: plugins after this one in plugstack.conf, TaskProlog and
  // --task-prolog, TMPDIR creation, PropagateResourceLimits. The agent resolves
  // the user's command with the job's PATH.
  if (auto closed = close_stepd_descriptors(); !closed) return closed;
  ::execve(path.c_str(), agent_argv.data(), envp);
  return fail("execve(" + agent_path + ") failed: " + std::strerror(errno));
}

void note_port_range(const NodePlan& plan) {
  if (plan.node_rank != 0) return;
  if (const auto ephemeral = kernel_ephemeral_ports())
    if (const auto overlap = ephemeral_overlap(plan.port_range, *ephemeral)) for_admin(*overlap);
}

Result<PortClaim> claim_task_master_port(const NodePlan& plan) {
  if (plan.node_rank != 0) return PortClaim{};
  if (plan.master_port_fixed)
    return claim_first_free("MASTER_PORT", plan.port_range, {plan.master_port}, plan.master_addr, true);
  auto outcome = claim_port(plan.master_port, plan.master_addr);
  if (auto* refused = std::get_if<PortRefusal>(&outcome))
    return fail("MASTER_PORT " + std::to_string(plan.master_port) + " (derived from the job and step ids) is in use "
                "on node 0 by " + describe_holder(*refused) +
                "; with several tasks per node every node derives it alone and cannot move past it: run one task "
                "per node (node 0's agent then picks a free port), or choose one with --ddp-port=PORT");
  return std::move(std::get<PortClaim>(outcome));
}

}  // namespace ddp::spank
