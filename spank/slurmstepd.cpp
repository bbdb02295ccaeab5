// slurmstepd on each compute node (S_CTX_REMOTE, the remote context). Named
// for the process it runs in, like client.cpp (srun, sbatch, salloc).
//
//   init_post_opt (root)  SDDP_* environment equivalents; load the site config;
//                         node 0's address (MASTER_ADDR) from Slurm's node table
//   user_init     (euid user, real/saved uid root) once per node: site
//                         environment; the step's facts and the node's
//                         hardware, planned by plan_step (ddp/plan/step_plan.hpp)
//   task_init     (user)  in each task, just before Slurm's exec, with the job
//                         user's real, effective and saved ids: launch
//                         ddp-agent (agent shape: prepended to the command on
//                         Slurm 23.11+, exec'd here before), become one worker
//                         (task shape), or export MASTER_* (batch script)
//   exit          (root)  node 0: the bad nodes, added to the
//                         job's ExcNodeList if it was requeued
//                         (requeue_exclusion.hpp) and handed to the site's
//                         BadNodeHook (bad_node_hook.hpp)
//
// Errors found before task_init are deferred to it (see DeferredError).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bad_node_hook.hpp"
#include "ddp/node/topology.hpp"
#include "ddp/plan/step_plan.hpp"
#include "launch.hpp"
#include "log.hpp"
#include "requeue_exclusion.hpp"
#include "site_load.hpp"
#include "state.hpp"
#include "step.hpp"

#ifndef DDP_AGENT_DEFAULT_PATH
#error "DDP_AGENT_DEFAULT_PATH must be defined by the build"
#endif
#ifndef DDP_CONFIG_DEFAULT_PATH
#error "DDP_CONFIG_DEFAULT_PATH must be defined by the build"
#endif

namespace ddp::spank {

namespace {

// The site's environment for --ddp steps, step-wide (spank_setenv in user_init
// reaches every task): Env= only where the user has not set the variable,
// ForceEnv= always.
void export_site_env(spank_t sp, const Settings& settings) {
  for (const auto& e : settings.env)
    if (spank_setenv(sp, e.name.c_str(), e.value.c_str(), e.forced ? 1 : 0) != ESPANK_SUCCESS && e.forced)
      verbose("cannot set " + e.name);
}

// What placing the workers needs of the node: hwloc's topology (or the site's
// XML export of it) and, when the step has GPUs (GPU workers need them), the
// driver's GPU minors. Read as the job's user, in user_init.
NodeHardware load_hardware(const Settings& settings, const StepFacts& facts) {
  NodeHardware hardware;
  hardware.topology =
      settings.topology_file.empty() ? load_topology_system() : load_topology_xml(settings.topology_file);
  if (!facts.step_gpus.empty()) hardware.gpu_minors = gpu_minors_to_bus_ids(settings.gpu_info_dir);
  return hardware;
}

// Reports a deferred error once: from node 0 for errors that are the same on
// every node, from each affected node for node-specific ones; always from the
// node's first task only.
//
// The step is not killed from here (slurm_kill_job_step): srun then aborts the
// launch before slurmstepd has forwarded this message, and the user sees only
// "Killed". When an error hits some nodes only, the agents of the others end
// at their rendezvous timeout with a message naming the missing node.
void report(spank_t sp, const DeferredError& e) {
  int local_task = 0;
  spank_get_item(sp, S_TASK_ID, &local_task);
  std::uint32_t node_id = 0;
  spank_get_item(sp, S_JOB_NODEID, &node_id);
  if (local_task == 0 && (e.node_specific || node_id == 0)) error(e.message);
}

// A notice for the user, once per step: node 0's first task.
void report_once(spank_t sp, const std::string& message) {
  int local_task = 0;
  spank_get_item(sp, S_TASK_ID, &local_task);
  std::uint32_t node_id = 0;
  spank_get_item(sp, S_JOB_NODEID, &node_id);
  if (local_task == 0 && node_id == 0) say(message);
}

// task_init runs in the task after slurmstepd has made it the job's user for
// good (real, effective and saved ids: _become_user() in Slurm 22.05's mgr.c),
// and everything after this execs or runs with those ids. Checked rather than
// assumed: were a Slurm release to call this hook with root's saved ids, a
// binary exec'd from here could regain root, so the plugin refuses instead.
// A job whose user is root runs as root, as Slurm runs its tasks anyway: the
// plugin never adds privileges, it keeps exactly those Slurm gave the task.
Status check_task_identity(spank_t sp) {
  uid_t job_uid = 0;
  gid_t job_gid = 0;
  if (spank_get_item(sp, S_JOB_UID, &job_uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &job_gid) != ESPANK_SUCCESS)
    return fail("Slurm did not tell the job's user");
  uid_t ruid = 0, euid = 0, suid = 0;
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0)
    return fail(std::string("cannot read the task's user ids: ") + std::strerror(errno));
  if (ruid == job_uid && euid == job_uid && suid == job_uid && rgid == job_gid && egid == job_gid && sgid == job_gid)
    return Ok{};
  const auto ids = [](auto r, auto e, auto s) {
    return std::to_string(r) + "/" + std::to_string(e) + "/" + std::to_string(s);
  };
  return fail("task_init runs with uid " + ids(ruid, euid, suid) + " gid " + ids(rgid, egid, sgid) +
              " (real/effective/saved), not as the job's user (uid " + std::to_string(job_uid) + " gid " +
              std::to_string(job_gid) +
              "), so it starts nothing: has Slurm changed when it calls task_init? Please report it");
}

// MASTER_ADDR is node 0's address (node_address: slurmstepd's own node
// table, slurmctld only when that has no answer), looked up here, in
// init_post_opt, where slurmstepd still runs as root with nothing locked.
// From Slurm 24.11 on, slurmstepd holds its authentication lock for writing
// while it runs user_init and task_init as the user (drop_privileges() calls
// auth_setuid_lock()), so a Slurm RPC from there ends the step with
// "auth_g_create: pthread_rwlock_rdlock(): Resource deadlock avoided".
Status look_up_master(spank_t sp, PluginState& st) {
  const auto id = step_id(sp);
  if (!id || !(is_launched_step(*id) || is_batch_step(*id))) return Ok{};
  JobEnv env(sp);
  const auto nodes = step_nodes(env, is_batch_step(*id));
  if (!nodes) return fail(nodes.error());
  auto master = node_address(nodes->nodes.front());
  if (!master) return fail(master.error() + " (needed for MASTER_ADDR)");
  st.master_addr = std::move(master).value();
  return Ok{};
}

// The site's kill switch (Enabled=no in the site config, globally or for the
// job's partition): the step runs as it would without --ddp, and the user
// reads why, once per step, instead of a launch that silently differs.
std::string turned_off_line(const Settings& settings, const std::string& partition) {
  return "--ddp is turned off " + (partition.empty() ? std::string("on this cluster") : "in partition " + partition) +
         " by the site (Enabled=no, " + settings.enabled_origin +
         "), so this step runs as a plain srun step: no agent, ranks or MASTER_ADDR; ask the admin when it is back";
}

// Node 0 of a launched --ddp step, as root: the FIFO its agent reports the
// bad nodes to (bad_node_fifo.hpp). Made here, as root, before
// the shape is known; only the agent shape is given it (user_init).
void open_report_fifo(spank_t sp, PluginState& st) {
  if (st.error) return;
  std::uint32_t node_id = 1, job = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  const auto step = step_id(sp);
  if (!step || !is_launched_step(*step) || spank_get_item(sp, S_JOB_NODEID, &node_id) != ESPANK_SUCCESS ||
      node_id != 0 || spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
    return;
  auto fifo = make_report_fifo(job, *step, uid, gid);
  if (fifo)
    st.report_fifo = std::move(fifo).value();
  else  // the step runs; the agent says that it cannot report, the admin reads why
    for_admin("bad nodes cannot be reported: " + fifo.error());
}

}  // namespace

int slurmstepd_init_post_opt(spank_t sp) {
  PluginState& st = state();
  // Under --ddp, the SDDP_* variables of the job fill in what no option said;
  // without it nothing is read.
  JobEnv job_env(sp);
  auto env = apply_environment(st.request, [&](const char* name) { return job_env.get(name); });
  if (job_env.error()) env = fail(*job_env.error());
  if (!env) st.defer(env.error(), false);
  if (!st.request.active() || st.error) return 0;
  if (st.args_error) {
    st.defer(*st.args_error + " (ask the admin to fix the spank_ddp.so line in plugstack.conf)", false);
    return 0;
  }

  const bool explicit_path = st.args.config.has_value();
  auto config = load_site_config(st.args.config.value_or(DDP_CONFIG_DEFAULT_PATH), explicit_path);
  if (!config)
    st.defer(config.error(), true);
  else
    st.config = with_plugin_settings(std::move(config).value(), st.args);
  if (auto master = look_up_master(sp, st); !master) st.master_error = master.error();
  open_report_fifo(sp, st);
  return 0;
}

int slurmstepd_user_init(spank_t sp) {
  PluginState& st = state();
  if (!st.request.active() || st.error) return 0;
  const auto id = step_id(sp);
  if (!id || !(is_launched_step(*id) || is_batch_step(*id))) return 0;

  auto facts = gather_step_facts(sp);
  if (!facts) {
    st.defer(facts.error(), true);
    return 0;
  }
  st.settings = resolve_settings(st.config, facts->partition, facts->node(), hostlist_contains);
  if (!st.settings.enabled) {
    st.turned_off = turned_off_line(st.settings, facts->partition);
    return 0;
  }
  if (st.master_error) {
    st.defer(*st.master_error, false);
    return 0;
  }
  st.agent_path = st.args.agent.value_or(st.settings.agent.value_or(DDP_AGENT_DEFAULT_PATH));
  export_site_env(sp, st.settings);

  if (facts->shape != Shape::Batch)
    for (const auto& ok : {check_step_command(*facts), check_options_for_shape(*facts, st.request)})
      if (!ok) {
        st.defer(ok.error(), false);
        return 0;
      }
  // The batch script runs on node 0 only; the hardware is for the workers.
  const auto hardware = facts->shape == Shape::Batch ? NodeHardware{} : load_hardware(st.settings, *facts);
  auto planned = plan_step(*facts, st.settings, st.request, st.master_addr.value_or(""), hardware);
  if (!planned) {
    st.defer(planned.error(), facts->shape != Shape::Batch);
    return 0;
  }
  st.shape = planned->shape;
  st.plan = planned->node;
  st.warnings.insert(st.warnings.end(), planned->warnings.begin(), planned->warnings.end());
  if (st.shape != Shape::Batch) note_port_range(*st.plan);
  if (st.report_fifo && st.shape == Shape::Agent) st.plan->bad_node_report = st.report_fifo->path;
  if (st.shape == Shape::Task) {
    auto claim = claim_task_master_port(*st.plan);
    if (!claim) {
      st.defer(claim.error(), true);
      return 0;
    }
    st.master_claim = std::move(claim).value();
  }
  return 0;
}

int slurmstepd_task_init(spank_t sp) {
  PluginState& st = state();
  if (!st.request.active()) return 0;
  const auto id = step_id(sp);
  if (!id || !(is_launched_step(*id) || is_batch_step(*id))) return 0;
  if (st.error) {
    report(sp, *st.error);
    return -1;
  }
  if (st.turned_off) {
    report_once(sp, *st.turned_off);
    return 0;
  }
  if (!st.plan) {
    report(sp, {"no plan for this node (internal error; please report it)", true});
    return -1;
  }
  if (auto who = check_task_identity(sp); !who) {
    report(sp, {who.error(), true});
    return -1;
  }
  int local_task = 0;
  spank_get_item(sp, S_TASK_ID, &local_task);
  if (local_task == 0)
    for (const auto& w : st.warnings) say("warning: " + w);
  Status done = Ok{};
  switch (st.shape) {
    case Shape::Batch:
      done = export_batch_env(sp, *st.plan);
      break;
    case Shape::Task:
      done = become_worker(sp, *st.plan);
      break;
    case Shape::Agent:
      done = launch_agent(sp, st.agent_path, *st.plan);
      break;
    case Shape::None:
      break;
  }
  if (done) return 0;
  report(sp, {done.error(), true});
  return -1;
}

int slurmstepd_exit(spank_t sp) {
  PluginState& st = state();
  if (!st.report_fifo) return 0;
  const auto report = read_bad_nodes(sp, *st.report_fifo);
  if (!report) {
    for_admin("the bad nodes are neither excluded from a requeue nor reported: " + report.error());
    return 0;
  }
  exclude_from_requeue(*report);  // first: the job is waiting to start again
  run_bad_node_hook(st.settings.bad_node_hook, *report);
  return 0;
}

}  // namespace ddp::spank
