#include "ddp/node/port_claim.hpp"

#include <pwd.h>
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

namespace ddp {

namespace {

sockaddr_un claim_address(std::uint16_t port, socklen_t& length) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = "slurm-ddp/port/" + std::to_string(port);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: the abstract namespace
  length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

std::string user_text(uid_t uid) {
  const passwd* pw = ::getpwuid(uid);
  return "user " + (pw ? std::string(pw->pw_name) + " (uid " + std::to_string(uid) + ")" : "uid " + std::to_string(uid));
}

// The claim's holder, asked through the claim itself.
std::string claim_holder(std::uint16_t port) {
  socklen_t length = 0;
  const sockaddr_un addr = claim_address(port, length);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return "";
  std::string who;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), length) == 0 &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
    who = cred.pid == ::getpid() ? "this step" : "pid " + std::to_string(cred.pid) + ", " + user_text(cred.uid);
  ::close(fd);
  return who;
}

}  // namespace

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
    if (err == EADDRINUSE) return PortRefusal{port, Holder::SlurmDdpStep, name_holder ? claim_holder(port) : ""};
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

std::string tcp_port_holder(std::uint16_t port) {
  std::string found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits;
      unsigned long uid = 0;
      if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid)) continue;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos || std::strtoul(local.c_str() + colon + 1, nullptr, 16) != port) continue;
      const bool listening = state == "0A";
      if (found.empty() || listening) found = user_text(uid_t(uid)) + (listening ? ", listening" : ", a connection");
      if (listening) return found;
    }
  }
  return found;
}

std::optional<PortRange> kernel_ephemeral_ports() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned first = 0, last = 0;
  if (!(in >> first >> last) || first > last || last > 65535) return std::nullopt;
  return PortRange{std::uint16_t(first), std::uint16_t(last)};
}

}  // namespace ddp
