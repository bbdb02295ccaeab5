#include "ddp/plan/ports.hpp"

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

}  // namespace ddp
