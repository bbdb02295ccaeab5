// Where one worker runs, and the one text form that carries a node's
// placements: in the plan (DDP_PLAN_WORKERS, plugin -> agent), in JOIN (agent
// -> node 0's coordinator) and in every message that prints them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp {

// Worked out by the plugin (hwloc, plan/binding.hpp), applied by the agent (or by
// the plugin itself in the task shape). Empty fields: not bound.
struct WorkerPlacement {
  std::string gpu;         // this worker's entry of CUDA_VISIBLE_DEVICES
  std::string gpu_bus_id;  // for messages
  std::string cpus;        // CPU list to pin to, "0-3,8"
  std::string nic;         // closest RDMA NIC ("mlx5_0"); exported only when the site asks
  bool operator==(const WorkerPlacement&) const = default;
};

// "GPU|BUS_ID|CPUS|NIC" per worker, ';' between workers, "" for none:
// "0|0000:18:00.0|0-3|mlx5_0;1|0000:98:00.0|32-35|mlx5_1". None of the fields
// can hold '|' or ';' (device indices or UUIDs, PCI addresses, CPU lists,
// device names); a field that does is refused by decode_placements.
std::string encode_placements(const std::vector<WorkerPlacement>& placements);
Result<std::vector<WorkerPlacement>> decode_placements(std::string_view text);

// For one line of a plan: "gpu 0000:18:00.0 cpus 0-3 nic mlx5_0", "cpus unbound".
std::string describe_placement(const WorkerPlacement& placement);

}  // namespace ddp
