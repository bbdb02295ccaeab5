// What slurmstepd reads of the job's environment into the step's facts
// (StepFacts, step_plan.hpp): the job's own variables, which its user can set
// to anything, parsed here as values so the plugin's reading is pure, unit-
// tested and fuzzed (tests/fuzz: job_env). The plugin bounds each value before
// it gets here (spank/step.cpp: JobEnv).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ddp/base/result.hpp"
#include "ddp/plan/step_plan.hpp"

namespace ddp {

using EnvLookup = std::function<std::optional<std::string>(const char*)>;

// Into `facts` (its nodes, total_tasks and local_tasks already set): the
// partition, the tasks per node (SLURM_STEP_TASKS_PER_NODE; one count per
// node, `local_tasks` each when absent or not one per node), the step's GPUs
// and CUDA_VISIBLE_DEVICES, whether LOCAL_RANK is set, Slurm's KillWait as
// srun read it. Refused: a malformed task count, and a heterogeneous step.
// `batch`: the batch script, which reads the job's GPUs and no task counts.
Status read_step_env(StepFacts& facts, bool batch, const EnvLookup& env);

}  // namespace ddp
