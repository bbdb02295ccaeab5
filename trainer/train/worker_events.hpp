// What reaches a training process from outside its step loop (loop.cpp):
// Slurm's preemption warning, and the tests' injected faults.
#pragma once

#include "process_group/bootstrap.hpp"
#include "train/options.hpp"

namespace ddp::train {

// SIGUSR1: the agent forwards Slurm's warning (--signal=USR1@T). The handler
// only raises a flag; the step loop takes it and shares it with every rank
// through the step's all-reduce, so all ranks stop at the same step.
void install_preempt_handler();
// True once after each SIGUSR1 (the flag is cleared).
bool take_preempt_request();

// Fault injection for the tests, first attempt only, on the rank
// --crash-rank names (default the last): --crash-at-step SIGKILLs it (a
// death), --stall-at-step puts it to sleep for good (a hang: no progress, no
// death; the agent's --hang-timeout names it).
void inject_faults(const TrainOptions& o, const WorkerIdentity& id, long long global_step);

}  // namespace ddp::train
