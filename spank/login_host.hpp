// A Slurm bug our users meet: Slurm 22.05.7 and 22.05.8 (Debian 12 ships
// 22.05.8; fixed in 22.05.9: "srun - fix regression in 22.05.7 that prevented
// slurmctld from connecting to an srun running outside of a compute node")
// send a step's node-failure message where an srun on a host that is neither
// a node nor the controller's cannot receive it. With --no-kill, which
// --ddp-spares and --ddp-min-nodes need, that srun then never returns after a
// node is lost, although the training goes on and finishes. srun warns
// (client.cpp); these are the pure parts, unit-tested.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp::spank {

// "slurm-wlm 22.05.8" (srun --version) -> "22.05.8".
std::optional<std::string> srun_release(std::string_view version_output);

// 22.05.7 and 22.05.8.
bool loses_node_failures_off_node(std::string_view release);

// This host, as Slurm may name it: its IPv4 addresses and its host names.
struct HostIdentity {
  std::vector<std::string> addresses;
  std::vector<std::string> names;
};

// Does `addr` (a NodeAddr or a controller address: an IPv4 address or a host
// name) name this host? Addresses are compared with addresses and names with
// names, since every network namespace of one machine shares its host name.
bool names_this_host(const std::string& addr, const HostIdentity& me);

// The warning, with the three ways out.
std::string login_host_warning(std::string_view release);

}  // namespace ddp::spank
