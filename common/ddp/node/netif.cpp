#include "ddp/node/netif.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ddp {

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<LocalRoute> route_to(const std::string& ipv4_address) {
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(9);  // discard; nothing is sent
  if (inet_pton(AF_INET, ipv4_address.c_str(), &peer.sin_addr) != 1)
    return fail("'" + ipv4_address + "' is not an IPv4 address");

  Fd sock{::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (sock.fd < 0) return fail(std::string("socket(): ") + std::strerror(errno));
  if (::connect(sock.fd, reinterpret_cast<sockaddr*>(&peer), sizeof peer) != 0)
    return fail("no route to " + ipv4_address + ": " + std::strerror(errno));
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (::getsockname(sock.fd, reinterpret_cast<sockaddr*>(&local), &len) != 0)
    return fail(std::string("getsockname(): ") + std::strerror(errno));

  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  LocalRoute route{text, {}};

  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return fail(std::string("getifaddrs(): ") + std::strerror(errno));
  std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  for (const ifaddrs* it = list; it; it = it->ifa_next) {
    if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
    const auto* addr = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    if (addr->sin_addr.s_addr == local.sin_addr.s_addr) {
      route.interface = it->ifa_name;
      return route;
    }
  }
  return fail("the route to " + ipv4_address + " leaves from " + route.source_address + ", which no interface holds");
}

}  // namespace ddp

namespace ddp {

Result<std::string> interface_address(const std::string& name) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return fail(std::string("getifaddrs(): ") + std::strerror(errno));
  std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  bool exists = false;
  for (const ifaddrs* it = list; it; it = it->ifa_next) {
    if (name != it->ifa_name) continue;
    exists = true;
    if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(it->ifa_addr)->sin_addr, text, sizeof text);
    return std::string(text);
  }
  return fail(exists ? "interface " + name + " has no IPv4 address" : "there is no interface " + name);
}

Result<bool> tcp_port_free(const std::string& ipv4_address, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, ipv4_address.c_str(), &addr.sin_addr) != 1)
    return fail("'" + ipv4_address + "' is not an IPv4 address");
  Fd sock{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (sock.fd < 0) return fail(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(sock.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(sock.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return true;
  if (errno == EADDRINUSE) return false;
  return fail("cannot test port " + std::to_string(port) + " on " + ipv4_address + ": " + std::strerror(errno));
}

std::uint16_t free_port(const std::string& ipv4_address) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, ipv4_address.c_str(), &addr.sin_addr) != 1) return 0;
  Fd sock{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  socklen_t len = sizeof addr;
  if (sock.fd < 0 || ::bind(sock.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(sock.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return 0;
  return ntohs(addr.sin_port);
}

}  // namespace ddp
