#include "ddp/plan/ports.hpp"

#include <algorithm>
#include <map>

namespace ddp {

namespace {
std::uint16_t port_in_slot(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t k) {
  // Spread jobs over the range with a multiplicative hash of the job id, then
  // walk forward from there one slot per (step, attempt). 64 attempts per step
  // leave room for --ddp-restarts without a step's ports meeting the next step's.
  // Slurm's special step ids (batch script 0xfffffffb, extern, interactive)
  // take slot 0; step N takes slot N + 1.
  const std::uint32_t span = range.size();
  const std::uint64_t job_offset = (std::uint64_t(job_id) * 2654435761u) % span;
  const std::uint64_t step_slot = step_id >= 0xfffffff0u ? 0 : std::uint64_t(step_id) + 1;
  const std::uint64_t slot = (step_slot * 64 + k) % span;
  return std::uint16_t(range.first + (job_offset + slot) % span);
}
}  // namespace

std::uint16_t derive_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id, std::uint32_t attempt) {
  return port_in_slot(range, job_id, step_id, 1 + attempt % 63);
}

std::uint16_t derive_rdzv_port(PortRange range, std::uint32_t job_id, std::uint32_t step_id) {
  return port_in_slot(range, job_id, step_id, 0);
}

std::uint16_t master_port_for(const NodePlan& plan, std::uint32_t attempt) {
  if (plan.master_port_fixed || attempt == 0) return plan.master_port;
  return derive_port(plan.port_range, plan.job_id, plan.step_id, attempt);
}

std::vector<std::uint16_t> port_candidates(PortRange range, std::uint16_t start, std::uint32_t limit) {
  // A start outside the range is a port chosen by hand (--ddp-port, a plan
  // written by a test or bench/scale_sim.py): that port alone.
  if (start < range.first || start > range.last) return {start};
  std::vector<std::uint16_t> ports;
  const std::uint32_t span = range.size();
  for (std::uint32_t i = 0; i < std::min(span, limit); ++i)
    ports.push_back(std::uint16_t(range.first + (start - range.first + i) % span));
  return ports;
}

std::vector<std::uint16_t> rdzv_candidates(const NodePlan& plan) {
  auto ports = port_candidates(plan.port_range, plan.rdzv_port, kRdzvCandidates);
  if (plan.master_port_fixed) std::erase(ports, plan.master_port);  // the user's, for the workers
  return ports;
}

std::vector<std::uint16_t> master_port_candidates(const NodePlan& plan, std::uint32_t attempt) {
  if (plan.master_port_fixed) return {plan.master_port};
  return port_candidates(plan.port_range, master_port_for(plan, attempt), plan.port_range.size());
}

std::optional<std::string> ephemeral_overlap(PortRange range, PortRange ephemeral) {
  const auto first = std::max(range.first, ephemeral.first);
  const auto last = std::min(range.last, ephemeral.last);
  if (first > last) return std::nullopt;
  const auto text = [](PortRange r) { return std::to_string(r.first) + "-" + std::to_string(r.last); };
  return "PortRange=" + text(range) + " overlaps the kernel's ephemeral ports (net.ipv4.ip_local_port_range " +
         text(ephemeral) + ") in " + text({first, last}) +
         ": any outgoing connection may take one of them; move PortRange out of it, or reserve it with "
         "net.ipv4.ip_local_reserved_ports=" + text(range);
}

std::string no_free_port(std::string_view what, PortRange range, const std::vector<PortRefusal>& refusals,
                         std::optional<PortRange> ephemeral) {
  using Holder = PortRefusal::Holder;
  std::map<Holder, std::size_t> count;
  std::string named;
  for (const auto& r : refusals) {
    ++count[r.holder];
    if (r.holder == Holder::OtherProcess && !r.who.empty() && named.size() < 200)
      named += (named.empty() ? "" : "; ") + std::to_string(r.port) + ": " + r.who;
  }
  std::string text = std::string(what) + ": none of the " + std::to_string(refusals.size()) + " port(s) tried in PortRange=" +
                     std::to_string(range.first) + "-" + std::to_string(range.last) + " (" +
                     std::to_string(range.size()) + " ports) is free on node 0: " +
                     std::to_string(count[Holder::SlurmDdpStep]) + " held by other slurm-ddp steps, " +
                     std::to_string(count[Holder::OtherProcess]) + " by other processes";
  if (!named.empty()) text += " (" + named + ")";
  if (count[Holder::Unknown]) text += ", " + std::to_string(count[Holder::Unknown]) + " could not be tested";
  if (ephemeral)
    if (auto overlap = ephemeral_overlap(range, *ephemeral)) text += "; " + *overlap;
  return text + "; the range is too small for the steps sharing this node: widen PortRange in the site config "
                "(the admin), or choose a port with --ddp-port=PORT";
}

}  // namespace ddp
