// A non-blocking TCP listening socket on `port` of every IPv4 address (of
// loopback with `loopback`), with SO_REUSEADDR so that a port whose earlier
// connections linger in TIME_WAIT can be bound again: the rendezvous gate's
// (rdzv_gate.hpp) and the pre-flight's sink (check_sink.hpp).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace ddp::agent {

// The descriptor, or -errno.
inline int listen_socket(std::uint16_t port, bool loopback, int backlog) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, backlog) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  return fd;
}

}  // namespace ddp::agent
