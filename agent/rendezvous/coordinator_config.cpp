// CoordinatorConfig::for_plan (coordinator.hpp): node 0's plan as the
// coordinator's settings.
#include "ddp/node/netif.hpp"
#include "ddp/plan/ports.hpp"
#include "rendezvous/coordinator.hpp"
#include "rendezvous/heartbeat.hpp"

namespace ddp::agent {

CoordinatorConfig CoordinatorConfig::for_plan(const NodePlan& plan, std::string secret, bool standalone,
                                              const std::string& host) {
  CoordinatorConfig cc;
  cc.run_id = plan.run_id;
  cc.secret = std::move(secret);
  cc.nnodes = plan.nnodes;
  cc.max_restarts = plan.max_restarts;
  cc.spares = plan.spares;
  cc.min_nodes = plan.min_nodes;
  cc.stragglers = plan.stragglers;
  cc.preflight = plan.preflight;
  cc.master_addr = plan.master_addr;
  // MasterInterface (e.g. IPoIB): the workers meet on node 0's address there,
  // which only node 0 knows; START carries it to everyone.
  if (!plan.master_interface.empty()) {
    if (auto addr = interface_address(plan.master_interface))
      cc.master_addr = *addr;
    else  // said to every node once they have all arrived, not left to their timeouts
      cc.setup_error = "MasterInterface=" + plan.master_interface + " from the site config: node 0 (" + host +
                       "): " + addr.error() + "; fix the site config or the node's network";
  }
  if (standalone && plan.master_port_fixed)  // --master-port: that port alone
    cc.claim_master_port = [addr = cc.master_addr, port = plan.master_port](std::uint32_t) {
      return claim_first_free("MASTER_PORT", {port, port}, {port}, addr, true);
    };
  else  // a step's, or a standalone agent's slot (its pid) in the default range
    cc.claim_master_port = [plan, addr = cc.master_addr](std::uint32_t attempt) {
      return claim_first_free("MASTER_PORT", plan.port_range, master_port_candidates(plan, attempt), addr,
                              plan.master_port_fixed);
    };
  cc.verbose = plan.verbose;
  cc.rdzv_timeout = std::chrono::milliseconds(plan.rdzv_timeout_ms);
  cc.heartbeat_timeout = std::chrono::milliseconds(plan.heartbeat_timeout_ms);
  cc.heartbeat_every = heartbeat_interval(plan.nnodes, cc.heartbeat_timeout);
  return cc;
}

}  // namespace ddp::agent
