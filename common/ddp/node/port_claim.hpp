// A TCP port claimed on this node for one slurm-ddp step's life, so that two
// steps sharing node 0 never pick the same MASTER_PORT or rendezvous port.
//
// PyTorch's rank 0 binds MASTER_PORT itself, so the port cannot be held open
// and handed over; a probe-then-use check races with the neighbour doing the
// same. The claim is an abstract Unix socket named after the port
// ("@slurm-ddp/port/29500"): bind() on it is atomic, it lives in the node's
// network namespace like the port, needs no file, no root and no cleanup (the
// kernel drops it with the last descriptor, however the holder ends), and its
// holder can be named (it listens; SO_PEERCRED on a connection to it gives
// the holder's pid and uid). The name is anyone's to bind: port_holder.hpp
// tells a step's claim from another process's. A process that binds the TCP
// port itself is found by binding it as TCPStore would, and named from
// /proc/net/tcp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/base/result.hpp"
#include "ddp/node/port_holder.hpp"
#include "ddp/plan/ports.hpp"

namespace ddp {

class PortClaim {
 public:
  PortClaim() = default;
  PortClaim(int fd, std::uint16_t port) : fd_(fd), port_(port) {}
  PortClaim(PortClaim&& other) noexcept;
  PortClaim& operator=(PortClaim&& other) noexcept;
  PortClaim(const PortClaim&) = delete;
  PortClaim& operator=(const PortClaim&) = delete;
  ~PortClaim();

  std::uint16_t port() const { return port_; }
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// Claims `port` on this node, then (with `tcp_address`) checks that a TCP
// listener could bind it there. Either the claim, or who holds the port.
// `name_holder`: find out who holds a port it cannot have (PortRefusal::who).
std::variant<PortClaim, PortRefusal> claim_port(std::uint16_t port, const std::optional<std::string>& tcp_address,
                                                bool name_holder = true);

// The first of `candidates` this node can claim (and bind, on `tcp_address`),
// or the error naming the range, the holders and the fix (no_free_port).
// `what` names the port in it ("MASTER_PORT"). `users_choice`: the one
// candidate is --ddp-port's, and the error says so.
Result<PortClaim> claim_first_free(std::string_view what, PortRange range, const std::vector<std::uint16_t>& candidates,
                                   const std::optional<std::string>& tcp_address, bool users_choice = false);
// `refusal` as the user reads it: "another slurm-ddp step (pid 42, user alice)".
std::string describe_holder(const PortRefusal& refusal);

// net.ipv4.ip_local_port_range of this node's network namespace.
std::optional<PortRange> kernel_ephemeral_ports();

}  // namespace ddp
