// Node 0 says that the job's time limit is near while srun still carries its
// output. Folklore (Slurm 22.05; integration.requeue_time_limit): at a
// batch job's time limit slurmstepd signals the batch script's processes
// too, and srun, on its SIGTERM, kills the step's tasks at once and exits
// ("srun: forcing job termination"); whatever an agent prints after that
// signal reaches no one, so the root cause job_report.hpp would print is
// lost. Slurm's own "CANCELLED ... DUE TO TIME LIMIT" line says what
// happened; this says it first, with what to do, within a minute of the end.
// The end is SLURM_JOB_END_TIME where Slurm exports it (newer releases; not 22.05),
// else asked of slurmctld once, 30 s into the step (scontrol's JSON or squeue,
// job_fields.hpp: a short step costs slurmctld nothing, bench/rpc_bench.py
// counts), and asked again when due, since the limit may have moved (scontrol update
// TimeLimit=). Not with --ddp-requeue, which says when it requeues.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>

#include "ddp/wire/node_plan.hpp"
#include "slurm/job_fields.hpp"

namespace ddp::agent {

// SLURM_JOB_END_TIME's seconds since the epoch; nullopt when absent, 0
// (no limit) or not a number.
std::optional<std::time_t> end_time_from_env(const char* text);

// What node 0 prints with `left` seconds to go.
std::string time_limit_warning(const std::string& job, std::chrono::seconds left);

class TimeLimitWatch {
 public:
  static constexpr std::chrono::seconds kLead{60};
  static constexpr std::chrono::seconds kFirstAsk{30};  // without SLURM_JOB_END_TIME
  TimeLimitWatch(const NodePlan& plan, bool standalone);
  // From the loop: asks when due, reads the answer, warns once.
  void tick(std::time_t now);

 private:
  enum class Phase { Off, Asking, Waiting, Said };
  void ask();
  void read_answer(std::time_t now);
  Phase phase_ = Phase::Off;
  std::string job_;
  std::time_t end_ = 0;
  ShowJob show_job_;
};

}  // namespace ddp::agent
