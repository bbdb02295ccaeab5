// The CPU collectives: Gloo over TCP for several ranks, and the trivial
// single-process version (no network; pre-division still applies).
#pragma once

#include <chrono>
#include <memory>

#include "ddp/base/result.hpp"
#include "model/ops.hpp"
#include "process_group/bootstrap.hpp"
#include "process_group/collectives.hpp"

namespace ddp::train {

// Connects a Gloo full mesh through the session's store. The interface is
// GLOO_SOCKET_IFNAME when set (the agent and PyTorch use it), else the one
// that routes to MASTER_ADDR. With several ranks on a node (LOCAL_WORLD_SIZE,
// GROUP_RANK) and use_shared_memory, buckets are reduced hierarchically:
// shared memory within the node, Gloo between node leaders; the gradient
// buffer of `gradient_floats` then lives in shared memory (gradient_memory()).
// `timeout` bounds the connect and every collective.
Result<std::unique_ptr<Collectives>> make_cpu_collectives(Session& session, std::size_t gradient_floats,
                                                          bool use_shared_memory, std::chrono::milliseconds timeout);

// World size 1: reductions are the identity (times the prescale).
std::unique_ptr<Collectives> make_local_collectives(Ops& ops);

}  // namespace ddp::train
