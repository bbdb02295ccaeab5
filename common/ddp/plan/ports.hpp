// MASTER_PORT and the rendezvous port of a step, derived from the job and
// step ids inside the site's range: the same on every node without talking.
#pragma once

#include <cstdint>

#include "ddp/base/parse.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

// MASTER_PORT of a step attempt: the same on every node without talking, inside
// the site's range, spread over the range by job id so jobs sharing a node rarely
// meet, and different for different steps (and attempts) of one job as long as
// the range holds more ports than the job has steps times 64. Each step owns 64
// consecutive slots: slot 0 is its rendezvous port, slots 1..63 its attempts
// (attempt 63 reuses attempt 0's, long closed by then).
std::uint16_t derive_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t attempt);
std::uint16_t derive_rdzv_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id);
// MASTER_PORT of `attempt` for this plan (fixed, or derived).
std::uint16_t master_port_for(const NodePlan& plan, std::uint32_t attempt);

}  // namespace ddp
