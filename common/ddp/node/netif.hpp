// Which local network interface reaches an address. Effects (a socket, the
// interface list); the plugin and the agent use it to tell Gloo and NCCL which
// interface to bind, the way Horovod probes for a routable interface.
#pragma once

#include <cstdint>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp {

struct LocalRoute {
  std::string source_address;  // the address the kernel would send from
  std::string interface;       // the interface holding that address
};

// Asks the kernel for the route to `ipv4_address` (a UDP connect sends nothing)
// and names the interface that owns the chosen source address. For one of this
// host's own addresses that is the interface holding it, not "lo".
Result<LocalRoute> route_to(const std::string& ipv4_address);

// The IPv4 address of interface `name` on this host (for MasterInterface=ib0).
Result<std::string> interface_address(const std::string& name);

// Whether a TCP listener could bind `ipv4_address`:`port` now (SO_REUSEADDR, as
// PyTorch's TCPStore binds). A port another process listens on is not free.
Result<bool> tcp_port_free(const std::string& ipv4_address, std::uint16_t port);

// A TCP port free on `ipv4_address` right now, as the kernel picks one: an
// ephemeral port, which any outgoing connection may take the next moment, so
// never a MASTER_PORT (tests' own listeners only). 0 when none could be found.
std::uint16_t free_port(const std::string& ipv4_address);

}  // namespace ddp
