// slurmstepd on each compute node (the remote context).
//
//   init_post_opt (root)  load the site config, resolve the agent path
//   user_init     (user)  once per node: work out this node's NodePlan
//   task_init     (user)  in the task, just before Slurm's exec: exec ddp-agent
//
// Errors found before task_init are deferred to it (see State::deferred_error).
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "ddp/plan.hpp"
#include "log.hpp"
#include "state.hpp"

#ifndef DDP_AGENT_DEFAULT_PATH
#error "DDP_AGENT_DEFAULT_PATH must be defined by the build"
#endif
#ifndef DDP_CONFIG_DEFAULT_PATH
#error "DDP_CONFIG_DEFAULT_PATH must be defined by the build"
#endif

namespace ddp::spank {

namespace {

// The batch script, the extern step and `salloc`'s interactive step run the
// remote callbacks too; only real srun steps get an agent.
bool is_launched_step(std::uint32_t step_id) {
  return step_id != SLURM_BATCH_SCRIPT && step_id != SLURM_EXTERN_CONT && step_id != SLURM_INTERACTIVE_STEP;
}

std::optional<std::string> job_getenv(spank_t sp, const char* name) {
  std::vector<char> buf(4096);
  for (;;) {
    const auto rc = spank_getenv(sp, name, buf.data(), int(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE || buf.size() > (1u << 20)) return std::nullopt;
    buf.resize(buf.size() * 4);
  }
}

template <class T>
Result<T> item(spank_t sp, spank_item_t which, const char* what) {
  T value{};
  if (spank_get_item(sp, which, &value) != ESPANK_SUCCESS) return fail(std::string("Slurm did not tell the ") + what);
  return value;
}

// Runs as root: the config must be root's and writable by nobody else, or a
// user could point the plugin at a binary of their choice.
Result<SiteConfig> load_site_config(const std::string& path, bool explicit_path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT && !explicit_path) return SiteConfig{};  // built-in defaults
    return fail("cannot read site config " + path + ": " + std::strerror(errno) +
                (explicit_path ? " (named by config= in plugstack.conf)" : ""));
  }
  if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail("site config " + path + " must be owned by root and writable only by root; fix with: chown root " +
                path + " && chmod go-w " + path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return fail("cannot read site config " + path);
  return parse_site_config(text.str(), path);
}

// The step's node names in node-rank order, expanded with Slurm's own hostlist
// code (SLURM_STEP_NODELIST is compressed: "n[0-3,7]").
Result<std::vector<std::string>> step_nodes(const std::string& nodelist) {
  hostlist_t hosts = slurm_hostlist_create(nodelist.c_str());
  if (!hosts) return fail("cannot parse the step's node list '" + nodelist + "'");
  std::vector<std::string> names;
  while (char* host = slurm_hostlist_shift(hosts)) {
    names.emplace_back(host);
    std::free(host);
  }
  slurm_hostlist_destroy(hosts);
  if (names.empty()) return fail("the step's node list '" + nodelist + "' is empty");
  return names;
}

// NodeAddr of a node, from slurmctld's node table: the address Slurm itself
// uses to reach that node. Never getaddrinfo(NodeName) or `hostname`: sites
// often publish an address the node name does not resolve to.
Result<std::string> node_address(std::string name) {
  node_info_msg_t* nodes = nullptr;
  if (slurm_load_node_single(&nodes, name.data(), SHOW_ALL) != SLURM_SUCCESS || !nodes || nodes->record_count < 1) {
    const std::string why = slurm_strerror(slurm_get_errno());
    if (nodes) slurm_free_node_info_msg(nodes);
    return fail("cannot look up the address of node " + name + " (MASTER_ADDR) in slurmctld: " + why);
  }
  const char* addr = nodes->node_array[0].node_addr;
  std::string result = addr && *addr ? addr : name;
  slurm_free_node_info_msg(nodes);
  return result;
}

Result<NodePlan> plan_node(spank_t sp, const State& st) {
  const auto job = item<std::uint32_t>(sp, S_JOB_ID, "job id");
  const auto step = item<std::uint32_t>(sp, S_JOB_STEPID, "step id");
  const auto nnodes = item<std::uint32_t>(sp, S_JOB_NNODES, "node count");
  const auto node_id = item<std::uint32_t>(sp, S_JOB_NODEID, "node index");
  for (const auto* r : {&job, &step, &nnodes, &node_id})
    if (!*r) return fail(r->error());

  const auto nodelist = job_getenv(sp, "SLURM_STEP_NODELIST");
  if (!nodelist) return fail("SLURM_STEP_NODELIST is not set in the step's environment");
  const auto nodes = step_nodes(*nodelist);
  if (!nodes) return fail(nodes.error());
  if (*node_id >= nodes->size() || nodes->size() != *nnodes)
    return fail("the step's node list '" + *nodelist + "' does not match its " + std::to_string(*nnodes) + " nodes");
  const std::string& node = (*nodes)[*node_id];

  const auto gpus = count_list(job_getenv(sp, "SLURM_STEP_GPUS").value_or(""));
  const auto workers = resolve_workers(st.request, gpus, node);
  if (!workers) return fail(workers.error());

  auto master = node_address(nodes->front());
  if (!master) return fail(master.error());

  NodePlan plan;
  plan.run_id = std::to_string(*job) + "." + std::to_string(*step);
  plan.mode = workers->mode;
  plan.node_rank = *node_id;
  plan.nnodes = *nnodes;
  plan.nproc = workers->nproc;
  // Every node runs the same worker count until the agents' rendezvous can
  // exchange counts; CPU mode and --ddp-gpus are homogeneous by construction.
  const std::vector<std::uint32_t> per_node(plan.nnodes, plan.nproc);
  const auto layout = rank_layout(per_node, plan.node_rank);
  if (!layout) return fail(layout.error());
  plan.rank_base = layout->rank_base;
  plan.world_size = layout->world_size;
  plan.master_addr = *master;
  plan.master_port = st.request.port.value_or(derive_port(st.config.port_range, *job, *step, 0));
  plan.max_restarts = st.request.restarts;
  plan.verbose = st.request.verbose;
  return plan;
}

bool launched_step(spank_t sp) {
  const auto step = item<std::uint32_t>(sp, S_JOB_STEPID, "step id");
  return step && is_launched_step(*step);
}

}  // namespace

int remote_init_post_opt(spank_t) {
  State& st = state();
  if (!st.request.active() || st.deferred_error) return 0;
  const bool explicit_path = st.args.config.has_value();
  const auto config = load_site_config(st.args.config.value_or(DDP_CONFIG_DEFAULT_PATH), explicit_path);
  if (!config) {
    st.deferred_error = config.error();
    return 0;
  }
  st.config = *config;
  st.agent_path = st.args.agent.value_or(st.config.agent.value_or(DDP_AGENT_DEFAULT_PATH));
  return 0;
}

int remote_user_init(spank_t sp) {
  State& st = state();
  if (!st.request.active() || st.deferred_error || !launched_step(sp)) return 0;
  auto plan = plan_node(sp, st);
  if (plan)
    st.plan = std::move(plan).value();
  else
    st.deferred_error = plan.error();
  return 0;
}

int remote_task_init(spank_t sp) {
  State& st = state();
  if (!st.request.active() || !launched_step(sp)) return 0;

  int local_task = 0;
  spank_get_item(sp, S_TASK_ID, &local_task);
  std::uint32_t local_tasks = 1;
  spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks);
  if (!st.deferred_error && local_tasks != 1)
    st.deferred_error = "--ddp starts its workers from one task per node, but this step has " +
                        std::to_string(local_tasks) +
                        " tasks on this node; drop --ntasks-per-node/-n or use --ntasks-per-node=1";
  if (st.deferred_error || !st.plan) {
    // Report once per node (from its first task), then fail every task.
    if (local_task == 0) error(st.deferred_error.value_or("no plan for this node (internal error)"));
    return -1;
  }
  const NodePlan& plan = *st.plan;

  if (::access(st.agent_path.c_str(), X_OK) != 0) {
    if (local_task == 0)
      error("cannot execute the agent " + st.agent_path + ": " + std::strerror(errno) +
            "; install ddp-agent there or set agent=PATH on the spank_ddp.so line in plugstack.conf");
    return -1;
  }

  Environment plan_env;
  write_plan(plan, plan_env);
  for (const auto& [name, value] : plan_env.vars())
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      error("cannot set " + name + " in the task's environment");
      return -1;
    }

  int argc = 0;
  char** argv = nullptr;
  char** envp = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || argc < 1) {
    error("Slurm did not give the step's command line or environment");
    return -1;
  }
  std::vector<char*> agent_argv;
  agent_argv.push_back(st.agent_path.data());
  agent_argv.push_back(const_cast<char*>("--plan-from-env"));
  agent_argv.push_back(const_cast<char*>("--"));
  agent_argv.insert(agent_argv.end(), argv, argv + argc);
  agent_argv.push_back(nullptr);

  if (plan.verbose && plan.node_rank == 0)
    say("node 0 of " + std::to_string(plan.nnodes) + ", MASTER_ADDR=" + plan.master_addr +
        " MASTER_PORT=" + std::to_string(plan.master_port) + ", " + std::to_string(plan.world_size) + " workers");

  // On Slurm 22.05 there is no spank_prepend_task_argv() (23.11 added it), so
  // the plugin execs the agent itself, as the user, in the task's own process.
  // What that skips: plugins after this one in plugstack.conf, TaskProlog and
  // --task-prolog, TMPDIR creation, PropagateResourceLimits. The agent resolves
  // the user's command with the job's PATH. Descriptors slurmstepd left open
  // must not leak into the user's processes.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  ::execve(st.agent_path.c_str(), agent_argv.data(), envp);
  error("execve(" + st.agent_path + ") failed: " + std::strerror(errno));
  return -1;
}

}  // namespace ddp::spank
