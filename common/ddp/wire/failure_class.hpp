// What kind of failure a root cause was. The node that sees a failure classes
// it (it alone knows its cgroup's OOM count); node 0 classes what it makes
// itself (a lost node, a setup error). The class travels with the failure
// (wire/failure.hpp), is printed under the root cause and put in the job's
// Comment (agent/slurm/job_report.hpp). What each class means for the run
// (restart or not, blame the node or not) is node 0's decision:
// agent/job/job.cpp's policy_of.
//
// In Llama 3's 54-day run most interruptions were hardware (GPUs, HBM), seen
// by the job as CUDA or NCCL errors; the script's own exceptions and
// out-of-memory are the job's, not the node's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ddp {

struct Failure;

enum class FailureClass {
  Exception,      // exited non-zero after a Python traceback: the script's own error
  Exit,           // exited non-zero without a traceback
  HostOom,        // killed by the kernel's OOM killer: its cgroup's oom_kill count rose
  GpuOom,         // CUDA out of memory
  CudaNccl,       // a CUDA, cuBLAS/cuDNN or NCCL error (bad GPU memory, a failing link, a driver fault)
  Crash,          // killed by SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT
  Killed,         // killed by another signal, from outside (SIGKILL with no OOM, SIGTERM...)
  Hang,           // no progress for --ddp-hang-timeout
  NodeLost,       // its heartbeats stopped or its connection ended
  NodeUnhealthy,  // the site's HealthCheck failed
  SlurmStop,      // Slurm ended the job or step: time limit, scancel, preemption
  Setup,          // the step could not begin: workers that cannot start, a bad config
};

// The class's name on the wire and in the job's Comment ("host_oom"), and back.
const char* class_name(FailureClass cls);
std::optional<FailureClass> class_from_name(std::string_view name);

// The class of a worker's failure on the node that saw it: from its exit
// (code, signal), the last lines of its stderr and whether its cgroup's OOM
// killer struck while it ran. Pure.
FailureClass classify_worker(const Failure& failure, bool oom_killed);

// The class a failure has when its node did not say (the coordinator's own,
// or an older agent's report): from its kind, exit and stderr.
FailureClass default_class(const Failure& failure);
// Its class: the one its node gave it, else default_class().
FailureClass class_of(const Failure& failure);

}  // namespace ddp
