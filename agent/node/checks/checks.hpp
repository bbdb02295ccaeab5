// The pre-flight's helper modes of ddp-agent (duties/preflight_checks.hpp
// starts them; main() dispatches on the first argument). Each is a short
// process of its own, so that the agent's loop never blocks and a check runs
// in the step's cgroup and cpuset, as the workers will. Both return main()'s
// exit code and print one line: the figure, or what went wrong.
//
//   ddp-agent --preflight-gemm MS                     GEMMs on this node's CPUs for MS ms: "mflops=N"
//   ddp-agent --preflight-send ADDR PORT MS           SLURM_DDP_CHECK_HEAD, then bytes for MS ms, to a node's check port
#pragma once

namespace ddp::agent {

int run_gemm_check(int argc, char** argv);
int run_send_check(int argc, char** argv);

}  // namespace ddp::agent
