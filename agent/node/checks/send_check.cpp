// The network check's sending end: its head line (SLURM_DDP_CHECK_HEAD: the
// token and its proof, rdzv_auth.hpp), then bytes for MS ms
// to another node's check port (node/duties/check_sink.hpp), then this side
// shut down first (the receiver times the bytes up to it) and its close awaited,
// so that the TIME_WAIT stays here. For a time, not a size: a few ms of a
// fast link are all noise, and a slow one would take long for a fixed size.
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "node/checks/checks.hpp"
#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {

int say(const std::string& text, int code) {
  std::printf("%s\n", text.c_str());
  return code;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= std::size_t(n);
  }
  return true;
}

}  // namespace

int run_send_check(int argc, char** argv) {
  if (argc != 5) return say("usage: SLURM_DDP_CHECK_HEAD=... ddp-agent --preflight-send ADDR PORT MS", 2);
  const std::string addr = argv[2];
  const char* head_env = std::getenv("SLURM_DDP_CHECK_HEAD");
  if (!head_env || !*head_env) return say("SLURM_DDP_CHECK_HEAD is not set: the agent sets it", 2);
  const auto port = parse_uint(argv[3], 1, 65535, "PORT");
  const auto ms = parse_uint(argv[4], 1, 60000, "MS");
  if (!port || !ms) return say(port ? ms.error() : port.error(), 2);
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(addr.c_str(), argv[3], &hints, &found) != 0 || !found)
    return say("cannot resolve the receiving node's address " + addr, 1);
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval limit{25, 0};  // below the agent's 30 s: a black-holed link is said here
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const bool connected = fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0;
  ::freeaddrinfo(found);
  if (!connected)
    return say("cannot connect to the receiving node (" + addr + ":" + argv[3] + "): " + std::strerror(errno), 1);
  const std::string head = head_env;
  std::vector<char> block(1 << 20, 'x');
  bool ok = send_all(fd, head.data(), head.size());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(*ms);
  while (ok && std::chrono::steady_clock::now() < until) ok = send_all(fd, block.data(), block.size());
  if (!ok) return say("sending to the receiving node (" + addr + ":" + argv[3] + ") failed: " + std::strerror(errno), 1);
  ::shutdown(fd, SHUT_WR);
  char rest[64];
  while (::read(fd, rest, sizeof rest) > 0) {
  }
  ::close(fd);
  return 0;
}

}  // namespace ddp::agent
