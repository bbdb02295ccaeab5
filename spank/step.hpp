// Asking Slurm about the step on this node, in slurmstepd: ids, nodes, tasks,
// GPUs, the command, node addresses. gather_step_facts() fills the value type
// StepFacts (common/ddp/plan/step_plan.hpp) once in user_init; everything after
// works on those values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/bounds.hpp"
#include "ddp/base/result.hpp"
#include "ddp/plan/step_plan.hpp"
#include "hostlist.hpp"
#include "slurm.hpp"

namespace ddp::spank {

bool is_batch_step(std::uint32_t step_id);
bool is_launched_step(std::uint32_t step_id);  // a real srun step (not batch/extern/interactive)

// The job's environment as slurmstepd (root) reads it for the plugin. Every
// value is the user's (srun sends it; a user's own srun build can send
// anything), so each is bounded before any parser sees it: a variable longer
// than its bound reads as unset, and error() names the first such variable and
// its bound, for the caller to fail the step with.
class JobEnv {
 public:
  explicit JobEnv(spank_t sp) : sp_(sp) {}
  std::optional<std::string> get(const char* name, std::size_t max_bytes = kMaxJobEnvValue);
  const std::optional<std::string>& error() const { return error_; }

 private:
  spank_t sp_;
  std::optional<std::string> error_;
};

Result<std::uint32_t> step_id(spank_t sp);

// The step's nodes, in node-rank order, and the hostlist they came from: the
// batch script's are the job's (SLURM_JOB_NODELIST), a step's its own
// (SLURM_STEP_NODELIST).
struct StepNodes {
  std::string list;
  std::vector<std::string> nodes;
};
Result<StepNodes> step_nodes(JobEnv& env, bool batch_script);
Result<StepFacts> gather_step_facts(spank_t sp);

// NodeAddr of a node, from slurmctld's node table.
Result<std::string> node_address(const std::string& node);

}  // namespace ddp::spank
