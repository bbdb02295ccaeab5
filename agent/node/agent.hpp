// The node agent, in the spirit of torchrun's elastic agent, but job-wide:
// every node's agent follows the orders of one coordinator
// (job/coordinator.hpp, on node 0), so all nodes start, stop and
// restart together. Its lifecycle (Rendezvous -> Running -> Stopping ->
// WaitOrders -> (Running ...) -> Done), every state and what moves it, is in
// lifecycle.hpp; agent.cpp feeds it the events and carries out what it says,
// with the workers (workers/), the rendezvous (rendezvous/) and the duties
// beside them (duties/: the hang watch, the site's health check, the requeue).
#pragma once

#include "spec.hpp"

namespace ddp::agent {

// Runs the workers to the end; returns the agent's exit code: 0, the failed
// worker's code (128 + signal when killed), 1 for a lost node or a failed
// rendezvous, or 128 + the signal that stopped the agent.
int run_agent(AgentSpec spec);

}  // namespace ddp::agent
