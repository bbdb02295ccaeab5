#include "ddp/node/port_claim.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "ddp/node/netif.hpp"
#include "ddp/node/port_holder.hpp"

namespace ddp {


PortClaim::PortClaim(PortClaim&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(std::exchange(other.port_, 0)) {}

PortClaim& PortClaim::operator=(PortClaim&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    port_ = std::exchange(other.port_, 0);
  }
  return *this;
}

PortClaim::~PortClaim() {
  if (fd_ >= 0) ::close(fd_);
}


std::variant<PortClaim, PortRefusal> claim_port(std::uint16_t port, const std::optional<std::string>& tcp_address,
                                                bool name_holder) {
  using Holder = PortRefusal::Holder;
  socklen_t length = 0;
  const sockaddr_un addr = claim_address(port, length);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return PortRefusal{port, Holder::Unknown, std::string("socket(): ") + std::strerror(errno)};
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), length) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EADDRINUSE) return claim_holder(port, name_holder);
    return PortRefusal{port, Holder::Unknown, std::string("claim: ") + std::strerror(err)};
  }
  // Listening only so that a step turned away can ask who holds it. Nothing
  // is ever accepted: each asker stays queued until the claim ends, so the
  // queue is as long as the kernel allows; past it the holder goes unnamed.
  ::listen(fd, SOMAXCONN);
  PortClaim claim(fd, port);
  if (tcp_address) {
    // A check that itself fails lets the port pass (the workers will say
    // so); a port another process holds does not.
    if (const auto free = tcp_port_free(*tcp_address, port); free && !*free)
      return PortRefusal{port, Holder::OtherProcess, name_holder ? tcp_port_holder(port) : ""};
  }
  return claim;
}

std::string describe_holder(const PortRefusal& refusal) {
  const auto with = [&](std::string what) { return refusal.who.empty() ? what : what + " (" + refusal.who + ")"; };
  switch (refusal.holder) {
    case PortRefusal::Holder::SlurmDdpStep:
      return with("another slurm-ddp step");
    case PortRefusal::Holder::OtherProcess:
      return with("a process that is not a slurm-ddp step");
    case PortRefusal::Holder::Unknown:
      break;
  }
  return with("something this node could not name");
}

Result<PortClaim> claim_first_free(std::string_view what, PortRange range, const std::vector<std::uint16_t>& candidates,
                                   const std::optional<std::string>& tcp_address, bool users_choice) {
  std::vector<PortRefusal> refusals;
  for (const auto port : candidates) {
    // Naming a holder reads /proc/net/tcp: the first few are enough.
    auto outcome = claim_port(port, tcp_address, refusals.size() < 4);
    if (auto* claim = std::get_if<PortClaim>(&outcome)) return std::move(*claim);
    refusals.push_back(std::get<PortRefusal>(outcome));
  }
  if (users_choice && refusals.size() == 1)
    return fail(std::string(what) + " " + std::to_string(refusals[0].port) + " (--ddp-port) is in use on node 0 by " +
                describe_holder(refusals[0]) + "; choose another port with --ddp-port=PORT, or leave it out and " +
                "let slurm-ddp pick a free one from PortRange");
  return fail(no_free_port(what, range, refusals, kernel_ephemeral_ports()));
}

std::optional<PortRange> kernel_ephemeral_ports() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned first = 0, last = 0;
  if (!(in >> first >> last) || first > last || last > 65535) return std::nullopt;
  return PortRange{std::uint16_t(first), std::uint16_t(last)};
}

}  // namespace ddp
