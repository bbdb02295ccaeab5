// MASTER_PORT and the rendezvous port of a step. Where a step looks for them
// is derived from the job and step ids inside the site's range, the same on
// every node without talking; which of those ports it gets is decided on node
// 0, where each port is claimed for the step's life (ddp/node/port_claim.hpp),
// so two steps sharing node 0 never get the same one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp {

// MASTER_PORT of a step attempt: the same on every node without talking, inside
// the site's range, spread over the range by job id so jobs sharing a node rarely
// meet, and different for different steps (and attempts) of one job as long as
// the range holds more ports than the job has steps times 64. Each step owns 64
// consecutive slots: slot 0 is its rendezvous port, slots 1..63 its attempts
// (attempt 63 reuses attempt 0's, long closed by then). Only where the search
// starts: node 0 moves on past a port another step or process holds.
std::uint16_t derive_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t attempt);
std::uint16_t derive_rdzv_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id);
// Where the search for MASTER_PORT of `attempt` starts for this plan (fixed, or derived).
std::uint16_t master_port_for(const NodePlan& plan, std::uint32_t attempt);

// The ports node 0 tries, in order, from `start` on through the range
// (wrapping), at most `limit`: distinct, all inside `range`. A `start` outside
// the range was chosen by hand, and is the only one.
std::vector<std::uint16_t> port_candidates(PortRange range, std::uint16_t start, std::uint32_t limit);

// The rendezvous may be on any of these (node 0 listens on the first it can
// claim; the other nodes try them in turn until node 0 answers as this step);
// never a --ddp-port.
inline constexpr std::uint32_t kRdzvCandidates = 32;
std::vector<std::uint16_t> rdzv_candidates(const NodePlan& plan);
// MASTER_PORT of `attempt`: --ddp-port alone, or a search through the range.
std::vector<std::uint16_t> master_port_candidates(const NodePlan& plan, std::uint32_t attempt);

// Why a port of the candidates could not be had on node 0, one per port tried.
struct PortRefusal {
  std::uint16_t port = 0;
  enum class Holder { SlurmDdpStep, OtherProcess, Unknown } holder = Holder::Unknown;
  std::string who;  // "pid 4242, user alice"; empty when unknown
};

// The error when no candidate could be had: the range, how many ports were
// tried, who holds them, whether the range overlaps the kernel's ephemeral
// ports (ip_local_port_range), and the fix. `what`: "the rendezvous port".
std::string no_free_port(std::string_view what, PortRange range, const std::vector<PortRefusal>& refusals,
                         std::optional<PortRange> ephemeral);

// The part of `range` the kernel also hands out as ephemeral source ports
// (net.ipv4.ip_local_port_range): the warning an admin needs, or nullopt.
std::optional<std::string> ephemeral_overlap(PortRange range, PortRange ephemeral);

}  // namespace ddp
