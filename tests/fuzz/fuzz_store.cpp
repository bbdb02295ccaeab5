// The trainer's bootstrap store, served by worker rank 0 on MASTER_PORT: a
// real StoreServer on a loopback port and a client whose bytes the fuzzer
// chooses. Whatever arrives, the server answers or closes that connection,
// and keeps serving everyone else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "fuzz.hpp"
#include "process_group/store.hpp"

namespace {

using namespace std::chrono_literals;

int connect_loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
    const int error = errno;
    ::close(fd);
    // libFuzzer's SIGALRM (its -timeout watchdog) interrupts a blocking connect: again.
    if (error == EINTR) continue;
    std::fprintf(stderr, "fuzz_store: cannot connect to the store: %s\n", std::strerror(error));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One server for the whole run, as one serves a whole training run.
  static const auto server = [] {
    spdlog::set_level(spdlog::level::off);
    auto s = ddp::train::StoreServer::listen(0);
    FUZZ_CHECK(s.ok());
    return std::move(s).value();
  }();
  const int fd = connect_loopback(server->port());
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server closed us: allowed
    sent += std::size_t(n);
  }
  ::shutdown(fd, SHUT_WR);
  // The server must answer what it understood and close at our end of input.
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 5000);
    if (ready < 0 && errno == EINTR) continue;
    FUZZ_CHECK(ready == 1);  // 5 s without an answer or a close: the server hangs
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
  }
  // Reset instead of FIN: millions of runs must not fill the port range with TIME_WAIT.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
  // Still serving: a rank connected before keeps working, whatever came since.
  static const auto rank = [] {
    auto c = ddp::train::StoreClient::connect("127.0.0.1", server->port(), 2s);
    FUZZ_CHECK(c.ok());
    return std::move(c).value();
  }();
  const ddp::train::Bytes check(data, data + std::min<std::size_t>(size, 64));
  FUZZ_CHECK(rank->set("fuzz/check", check));
  const auto value = rank->get("fuzz/check", 2s);
  FUZZ_CHECK(value && *value == check);
  return 0;
}
