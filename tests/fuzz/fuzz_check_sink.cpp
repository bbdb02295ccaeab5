// A node's pre-flight check port (agent/node/duties/check_sink.hpp) as anyone
// on the cluster sees it: a real CheckSink on a loopback port, and
// connections whose bytes the fuzzer chooses. Its promise: only a connection
// whose first line proves the step's secret is a transfer; whatever else
// arrives (before, beside or after it) never makes one up, never ends it,
// and never crashes or stalls the agent.
//
// Input: byte 0 bit 0 set: the first connection starts with a proven head
// (the harness has the secret); byte 1 sets the chunk size; the rest, split
// at each 0xff byte, is what each connection sends (at most 8 connections).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_auth.hpp"
#include "event_loop.hpp"
#include "fuzz.hpp"
#include "node/duties/check_sink.hpp"

namespace {

namespace rdzv = ddp::rdzv;
using namespace std::chrono_literals;

const std::string kSecret(64, '5');
constexpr char kRun[] = "fuzz.0";
const std::string kToken(32, 'a');

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // loopback: done or in progress
  return fd;
}

void close_reset(int fd) {
  const linger reset{1, 0};  // no TIME_WAIT per run
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const bool proven = data[0] & 1;
  const std::size_t chunk = 1 + data[1] % 128;
  std::vector<std::string> parts;
  ddp::fuzz::for_each_part(ddp::fuzz::as_text(data + 2, size - 2), '\xff', [&](std::string_view part) {
    if (parts.size() < 8) parts.emplace_back(part);
  });
  if (proven) parts[0] = rdzv::transfer_head(kSecret, kRun, kToken) + parts[0];

  ddp::agent::EventLoop loop;
  ddp::agent::CheckSink sink(loop, kSecret, kRun);
  FUZZ_CHECK(sink.listen(0).ok());
  std::vector<int> fds;
  for (const auto& part : parts) {
    const int fd = connect_to(sink.port());
    fds.push_back(fd);
    (void)loop.run_once(0ms);
    for (std::size_t pos = 0; pos < part.size(); pos += chunk) {
      (void)::send(fd, part.data() + pos, std::min(chunk, part.size() - pos), MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)loop.run_once(0ms);
    }
  }
  for (const int fd : fds) ::shutdown(fd, SHUT_WR);
  std::vector<ddp::agent::CheckSink::Received> received;
  for (int turn = 0; turn < 20; ++turn) {
    (void)loop.run_once(1ms);
    sink.tick();
    for (auto& r : sink.take_received()) received.push_back(std::move(r));
  }
  // Only the proven head makes a transfer, and it is answered.
  FUZZ_CHECK(received.size() <= 1);
  for (const auto& r : received) FUZZ_CHECK(proven && r.token == kToken);
  for (const int fd : fds) close_reset(fd);
  return 0;
}
