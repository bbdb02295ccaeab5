#include "step.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <cstdlib>

#include "ddp/base/parse.hpp"
#include "ddp/plan/step_env.hpp"
#include "ddp/plan/workers.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp::spank {

namespace {

template <class T>
Result<T> item(spank_t sp, spank_item_t which, const char* what) {
  T value{};
  if (spank_get_item(sp, which, &value) != ESPANK_SUCCESS) return fail(std::string("Slurm did not tell the ") + what);
  return value;
}

// What the user asked of pyxis, NVIDIA's container plugin, in its own words;
// empty if nothing. spank_option_getopt() finds an option by its name alone,
// whichever plugin registered it (spank.c: _opt_by_name, 22.05 to 26.05), and
// answers from user_init on; pyxis also takes its options from PYXIS_CONTAINER_*
// variables (0.21+), which getopt does not see.
std::string container_request(spank_t sp, JobEnv& env) {
  for (std::string name : {"container-image", "container-name"}) {
    spank_option opt{};
    opt.name = name.data();
    opt.has_arg = 1;
    char* arg = nullptr;
    if (spank_option_getopt(sp, &opt, &arg) == ESPANK_SUCCESS)
      return "--" + name + (arg && *arg ? "=" + std::string(arg) : "");
  }
  for (const char* var : {"PYXIS_CONTAINER_IMAGE", "PYXIS_CONTAINER_NAME"})
    if (auto value = env.get(var); value && !value->empty()) return std::string(var) + "=" + *value;
  return "";
}

}  // namespace

bool is_batch_step(std::uint32_t id) { return id == SLURM_BATCH_SCRIPT; }

bool is_launched_step(std::uint32_t id) {
  return id != SLURM_BATCH_SCRIPT && id != SLURM_EXTERN_CONT && id != SLURM_INTERACTIVE_STEP;
}

std::optional<std::string> JobEnv::get(const char* name, std::size_t max_bytes) {
  std::vector<char> buf(std::min<std::size_t>(4096, max_bytes + 1));
  for (;;) {
    const auto rc = spank_getenv(sp_, name, buf.data(), int(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE) return std::nullopt;
    if (buf.size() > max_bytes) {  // the value and its NUL did not fit in max_bytes + 1
      if (!error_)
        error_ = std::string(name) + " in the job's environment is longer than " + std::to_string(max_bytes) +
                 " bytes, the most the plugin reads there; unset it or shorten it (slurm-ddp's bounds: spank/SECURITY.md)";
      return std::nullopt;
    }
    buf.resize(std::min(buf.size() * 4, max_bytes + 1));
  }
}

Result<std::uint32_t> step_id(spank_t sp) { return item<std::uint32_t>(sp, S_JOB_STEPID, "step id"); }

Result<StepNodes> step_nodes(JobEnv& env, bool batch_script) {
  // The batch script sees the job's nodes; a step sees its own.
  const char* list_var = batch_script ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
  auto list = env.get(list_var, kMaxNodeListBytes);
  if (env.error()) return fail(*env.error());
  if (!list) return fail(std::string(list_var) + " is not set in the step's environment");
  auto nodes = expand_hostlist(*list, HostlistSource::Job);
  if (!nodes) return fail(nodes.error());
  return StepNodes{std::move(*list), std::move(nodes).value()};
}

// libslurmfull's own lookup, which slurmd and slurmstepd use to reach a node
// (message forwarding): NodeName -> the address from the node table this
// process already holds (slurm.conf's NodeAddr, and Slurm's updates of it for
// cloud and dynamic nodes), resolved as Slurm resolves it. Not in Slurm's
// public headers; the same signature in 22.05, 24.11 and 26.05 (read in
// src/common/read_config.c), so it is used only when built for those (the
// package is rebuilt for each Slurm release). Weak: a Slurm without it
// leaves it null, and the plugin asks slurmctld instead.
#define DDP_SLURM_CONF_GET_ADDR_KNOWN (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(26, 6, 0))
extern "C" int slurm_conf_get_addr(const char* node_name, slurm_addr_t* address, std::uint16_t flags)
    __attribute__((weak));

namespace {

std::optional<std::string> local_node_address(const std::string& node) {
  if (!DDP_SLURM_CONF_GET_ADDR_KNOWN || !slurm_conf_get_addr) return std::nullopt;
  slurm_addr_t addr{};
  if (slurm_conf_get_addr(node.c_str(), &addr, 0) != SLURM_SUCCESS) return std::nullopt;
  char host[NI_MAXHOST] = "";
  const auto len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (addr.ss_family == 0 ||
      ::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), socklen_t(len), host, sizeof host, nullptr, 0,
                    NI_NUMERICHOST) != 0)
    return std::nullopt;
  return std::string(host);
}

Result<std::string> node_address_from_slurmctld(const std::string& node) {
  node_info_msg_t* nodes = nullptr;
  std::string name = node;
  if (slurm_load_node_single(&nodes, name.data(), SHOW_ALL) != SLURM_SUCCESS || !nodes || nodes->record_count < 1) {
    const std::string why = slurm_strerror(slurm_compat::last_error());
    if (nodes) slurm_free_node_info_msg(nodes);
    return fail("cannot look up the address of node " + node + " in slurmctld: " + why);
  }
  const char* addr = nodes->node_array[0].node_addr;
  std::string result = addr && *addr ? addr : node;
  slurm_free_node_info_msg(nodes);
  return result;
}

}  // namespace

// The address Slurm itself uses to reach the node. Never getaddrinfo(NodeName)
// or `hostname`: sites often publish an address the node name does not resolve
// to (and on our test cluster no node name resolves at all). From the node
// table slurmstepd holds, with no RPC: every node of a step asks, and N RPCs
// per step start would load the one daemon a site cannot scale out
// (bench/rpc_bench.py); slurmctld only when that table has no answer.
Result<std::string> node_address(const std::string& node) {
  if (auto local = local_node_address(node)) return *local;
  return node_address_from_slurmctld(node);
}

namespace {

// A job array's task: scontrol must name it ARRAYJOBID_TASKID, as the first
// task's own job id is the array's, which names every task.
Status gather_array_task(spank_t sp, StepFacts& f) {
  const auto array = item<std::uint32_t>(sp, S_JOB_ARRAY_ID, "array job id");
  const auto task = item<std::uint32_t>(sp, S_JOB_ARRAY_TASK_ID, "array task id");
  if (!array) return fail(array.error());
  if (!task) return fail(task.error());
  // Not an array task: slurmstepd says the job's own id and NO_VAL as the
  // task (22.05 to 26.05; 0 in some older paths).
  if (*array == 0 || *task == NO_VAL) return Ok{};
  f.array_job_id = *array;
  f.array_task_id = *task;
  return Ok{};
}

}  // namespace

Result<StepFacts> gather_step_facts(spank_t sp) {
  StepFacts f;
  const auto job = item<std::uint32_t>(sp, S_JOB_ID, "job id");
  const auto step = step_id(sp);
  const auto node_id = item<std::uint32_t>(sp, S_JOB_NODEID, "node index");
  const auto local_tasks = item<std::uint32_t>(sp, S_JOB_LOCAL_TASK_COUNT, "local task count");
  const auto total_tasks = item<std::uint32_t>(sp, S_JOB_TOTAL_TASK_COUNT, "task count");
  for (const auto* r : {&job, &step, &node_id, &local_tasks, &total_tasks})
    if (!*r) return fail(r->error());
  f.job_id = *job;
  f.step_id = *step;
  if (auto ok = gather_array_task(sp, f); !ok) return fail(ok.error());
  f.node_id = *node_id;
  f.local_tasks = *local_tasks;
  f.total_tasks = *total_tasks;

  const bool batch = is_batch_step(f.step_id);
  JobEnv env(sp);
  auto nodes = step_nodes(env, batch);
  if (!nodes) return fail(nodes.error());
  f.nodes = nodes->nodes;
  if (f.node_id >= f.nodes.size())
    return fail("node index " + std::to_string(f.node_id) + " is outside the node list '" + nodes->list + "'");
  f.shape = step_shape(batch, f.total_tasks, f.nodes.size());

  const auto read = read_step_env(f, batch, [&](const char* name) { return env.get(name); });
  if (env.error()) return fail(*env.error());
  if (!read) return fail(read.error());
  f.container = container_request(sp, env);
  if (env.error()) return fail(*env.error());

  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) == ESPANK_SUCCESS)
    for (int i = 0; i < argc; ++i) f.argv.emplace_back(argv[i]);
  return f;
}

}  // namespace ddp::spank
