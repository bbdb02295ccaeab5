// slurmstepd on each compute node (S_CTX_REMOTE, the remote context). Named
// for the process it runs in, like client.cpp (srun, sbatch, salloc).
//
//   init_post_opt (root)  DDP_* environment equivalents; load the site config;
//                         node 0's address (MASTER_ADDR) from slurmctld
//   user_init     (euid user, real/saved uid root) once per node: site
//                         environment, this node's plan
//   task_init     (user)  in each task, just before Slurm's exec, with the job
//                         user's real, effective and saved ids: launch
//                         ddp-agent (agent shape: prepended to the command on
//                         Slurm 23.11+, exec'd here before), become one worker
//                         (task shape), or export MASTER_* (batch script)
//
// Errors found before task_init are deferred to it (see DeferredError).
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ddp/netif.hpp"
#include "ddp/roster.hpp"
#include "ddp/worker_env.hpp"
#include "launch.hpp"
#include "log.hpp"
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

// Runs as root: the config must be root's and writable by nobody else (nor
// may any directory above it be), or a user could point the plugin at a
// binary of their choice; read_trusted_file() checks the file it opened.
Result<SiteConfig> load_site_config(const std::string& path, bool explicit_path) {
  auto text = read_trusted_file(path, "the site config");
  if (!text) return fail(text.error());
  if (!*text) {
    if (!explicit_path) return SiteConfig{};  // built-in defaults
    return fail("cannot read the site config " + path + ": " + std::strerror(ENOENT) +
                " (named by config= in plugstack.conf)");
  }
  auto config = parse_site_config(**text, path);
  if (!config) return config;
  // parse_site_config is pure; the node lists are Slurm's syntax, so Slurm's
  // code checks them here: a NodeName= typo that matched nothing would
  // silently leave those nodes on the wider settings.
  for (const auto& line : config->lines) {
    if (line.scope != ConfigLine::Scope::Nodes) continue;
    if (auto nodes = expand_hostlist(line.nodes); !nodes)
      return fail(line.origin + ": NodeName=" + line.nodes + ": " + nodes.error() +
                  "; write it as in slurm.conf, e.g. NodeName=gpu[001-064]");
  }
  return config;
}

// The site's environment for --ddp steps, step-wide (spank_setenv in user_init
// reaches every task): Env= only where the user has not set the variable,
// ForceEnv= always.
void export_site_env(spank_t sp, const Settings& settings) {
  for (const auto& e : settings.env)
    if (spank_setenv(sp, e.name.c_str(), e.value.c_str(), e.forced ? 1 : 0) != ESPANK_SUCCESS && e.forced)
      verbose("cannot set " + e.name);
}

// The step-wide plan: ranks, MASTER_*, placements. Node-specific errors (GPU
// counts) name the node; the rest are the same everywhere.
Status plan_step(PluginState& st, const StepFacts& facts) {
  const bool task_shape = facts.total_tasks > facts.nodes.size();
  st.shape = task_shape ? Shape::Task : Shape::Agent;

  // Task shape: each task is one worker, so Slurm's task count is the count.
  const auto gpus = std::uint32_t(facts.step_gpus.size());
  const auto workers = task_shape ? resolve_task_workers(st.request, gpus, facts.local_tasks, facts.node())
                                  : resolve_workers(st.request, gpus, facts.node());
  if (!workers) return fail(workers.error());

  if (!st.master_addr) return fail("node 0's address was not looked up (internal error; please report it)");

  NodePlan plan;
  plan.run_id = std::to_string(facts.job_id) + "." + std::to_string(facts.step_id);
  plan.mode = workers->mode;
  plan.node_rank = facts.node_id;
  plan.nnodes = std::uint32_t(facts.nodes.size());
  plan.nproc = workers->nproc;
  // Task shape: Slurm's tasks per node, heterogeneous or not. Agent shape:
  // every node runs the same count until the agents' rendezvous can exchange
  // counts (CPU mode and --ddp-gpus are homogeneous by construction).
  if (auto ok = check_membership(st.request.spares, st.request.min_nodes, plan.nnodes, task_shape); !ok)
    return fail(ok.error());
  // Spares (--ddp-spares, the last K nodes) hold no ranks until the
  // rendezvous gives one of them a lost node's group.
  const std::uint32_t groups = plan.nnodes - st.request.spares;
  const bool spare = plan.node_rank >= groups;
  const auto per_node = task_shape ? facts.tasks_per_node : std::vector<std::uint32_t>(groups, plan.nproc);
  const auto layout = rank_layout(per_node, spare ? 0 : plan.node_rank);
  if (!layout) return fail(layout.error());
  plan.rank_base = spare ? 0 : layout->rank_base;
  plan.world_size = layout->world_size;
  plan.master_addr = *st.master_addr;
  plan.job_id = facts.job_id;
  plan.step_id = facts.step_id;
  plan.port_range = st.settings.port_range;
  plan.master_port = st.request.port.value_or(derive_port(st.settings.port_range, facts.job_id, facts.step_id, 0));
  plan.master_port_fixed = st.request.port.has_value();
  plan.rdzv_port = derive_rdzv_port(st.settings.port_range, facts.job_id, facts.step_id);
  if (plan.rdzv_port == plan.master_port)  // --ddp-port chose the rendezvous slot's port
    plan.rdzv_port = derive_port(st.settings.port_range, facts.job_id, facts.step_id, 62);
  plan.master_interface = task_shape ? "" : st.settings.master_interface;
  plan.rdzv_timeout_ms = std::uint32_t(st.settings.rdzv_timeout.count());
  plan.heartbeat_timeout_ms = std::uint32_t(st.settings.heartbeat_timeout.count());
  plan.spares = st.request.spares;
  plan.groups = groups;
  plan.min_nodes = st.request.min_nodes.value_or(0);
  plan.group_rank = plan.node_rank;
  plan.health_check = st.settings.health_check;
  plan.health_check_timeout_ms = std::uint32_t(st.settings.health_check_timeout.count());
  // A lost node taken over by a spare, or dropped, restarts every worker and
  // counts against --ddp-restarts like any failure; left at 0, the budget is
  // the number of nodes that may be lost.
  plan.max_restarts = st.request.restarts;
  if (plan.max_restarts == 0 && (plan.spares > 0 || plan.min_nodes > 0))
    plan.max_restarts = plan.spares + (plan.min_nodes > 0 ? plan.groups - plan.min_nodes : 0);
  plan.stop_grace_ms = std::uint32_t(st.settings.stop_grace.value_or(stop_grace_for(facts.kill_wait)).count());
  plan.verbose = st.request.verbose;
  plan.export_ib_hca = st.settings.export_ib_hca;
  // --ddp-requeue, or the site's default when the user said nothing (DDP_REQUEUE=0 says no).
  plan.requeue = st.request.requeue.value_or(st.settings.requeue);
  plan.requeue_wait_ms = std::uint32_t(st.settings.requeue_wait.count());
  plan.hang_timeout_ms = st.request.hang_timeout_s ? *st.request.hang_timeout_s * 1000u
                                                   : std::uint32_t(st.settings.hang_timeout.count());
  if (task_shape && st.request.hang_timeout_s.value_or(0) > 0 && facts.node_id == 0)
    st.warnings.push_back("--ddp-hang-timeout is ignored with several tasks per node: only the agent (one task "
                          "per node, e.g. srun --ntasks-per-node=1 --ddp-procs=N) watches the workers' progress");
  plan.placements = place_workers(st.settings, plan, facts, st.warnings);
  st.plan = std::move(plan);
  return Ok{};
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

// MASTER_ADDR is node 0's NodeAddr, asked of slurmctld here, in
// init_post_opt, where slurmstepd still runs as root with nothing locked.
// From Slurm 24.11 on, slurmstepd holds its authentication lock for writing
// while it runs user_init and task_init as the user (drop_privileges() calls
// auth_setuid_lock()), so a Slurm RPC from there ends the step with
// "auth_g_create: pthread_rwlock_rdlock(): Resource deadlock avoided".
Status look_up_master(spank_t sp, PluginState& st) {
  const auto id = step_id(sp);
  if (!id || !(is_launched_step(*id) || is_batch_step(*id))) return Ok{};
  // The batch script sees the job's nodes; a step its own.
  const char* list_var = is_batch_step(*id) ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
  const auto list = job_getenv(sp, list_var);
  if (!list) return fail(std::string(list_var) + " is not set in the step's environment");
  const auto nodes = expand_hostlist(*list);
  if (!nodes) return fail(nodes.error());
  auto master = node_address(nodes->front());
  if (!master) return fail(master.error() + " (needed for MASTER_ADDR)");
  st.master_addr = std::move(master).value();
  return Ok{};
}

}  // namespace

int slurmstepd_init_post_opt(spank_t sp) {
  PluginState& st = state();
  // The DDP_* variables of the job fill in what no option said (slurmrestd).
  if (auto env = apply_environment(st.request, [&](const char* name) { return job_getenv(sp, name); }); !env)
    st.defer(env.error(), false);
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
  if (auto master = look_up_master(sp, st); !master) st.defer(master.error(), false);
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
  st.agent_path = st.args.agent.value_or(st.settings.agent.value_or(DDP_AGENT_DEFAULT_PATH));
  export_site_env(sp, st.settings);

  if (is_batch_step(*id)) {
    st.shape = Shape::Batch;
    auto plan = plan_batch(st.request, st.settings, *facts, st.master_addr.value_or(""));
    if (plan)
      st.plan = std::move(plan).value();
    else
      st.defer(plan.error(), false);  // batch scripts run on node 0 only
    return 0;
  }
  // A launcher as the command (agent shape) or LOCAL_RANK set: the same on
  // every node, so said once.
  const bool task_shape = facts->total_tasks > facts->nodes.size();
  if (auto ok = check_not_a_launcher(task_shape ? std::vector<std::string>{} : facts->argv, facts->local_rank_set);
      !ok) {
    st.defer(ok.error(), false);
    return 0;
  }
  if (auto ok = check_no_container_plugin(facts->container, task_shape); !ok) {
    st.defer(ok.error(), false);
    return 0;
  }
  if (auto ok = plan_step(st, *facts); !ok) st.defer(ok.error(), true);
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

}  // namespace ddp::spank
