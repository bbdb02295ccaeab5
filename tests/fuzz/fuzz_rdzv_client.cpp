// An agent's rendezvous client against whatever holds the port it knocks at:
// a listening socket on loopback whose bytes the fuzzer chooses (a squatter,
// another program, a broken or hostile "node 0"). The client's promise from
// protocol 9 on: until node 0 has proved the step's secret, nothing a port
// says ends the rendezvous; the client passes the port by and looks on. So
// whatever the bytes, on_lost is never called and nothing is started,
// stopped or ended.
//
// Input: byte 0 bit 0 set: the harness first sends a well-formed CHALLENGE
// of the client's own run (so that the bytes land after the client's
// RESPONSE: WELCOMEs, REFUSEDs, orders); byte 1 sets the chunk size; the rest
// is the stream.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <list>
#include <string>

#include <spdlog/spdlog.h>

#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "event_loop.hpp"
#include "fuzz.hpp"
#include "rendezvous/rdzv_client.hpp"

namespace {

namespace rdzv = ddp::rdzv;
using namespace std::chrono_literals;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr char kRun[] = "fuzz-run";

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd < 0) return;
    const linger reset{1, 0};  // no TIME_WAIT per run
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = (spdlog::set_level(spdlog::level::off), true);
  (void)quiet;
  if (size < 2) return 0;
  const bool challenge_first = data[0] & 1;
  const std::size_t chunk = 1 + data[1] % 128;
  const auto stream = ddp::fuzz::as_text(data + 2, size - 2);

  Fd listener;
  listener.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  FUZZ_CHECK(::bind(listener.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  FUZZ_CHECK(::listen(listener.fd, 8) == 0);
  ::getsockname(listener.fd, reinterpret_cast<sockaddr*>(&addr), &len);

  ddp::agent::EventLoop loop;
  ddp::agent::ClientConfig cfg;
  cfg.run_id = kRun;
  cfg.secret = kSecret;
  cfg.node_rank = 1;
  cfg.coordinator_addr = "127.0.0.1";
  cfg.coordinator_ports = {ntohs(addr.sin_port)};
  std::string lost;
  int orders = 0;
  ddp::agent::RdzvClient client(
      loop, cfg,
      ddp::agent::RdzvClient::Events{[&](const rdzv::Start&) { ++orders; }, [&](std::uint32_t) { ++orders; },
                                     [&](const ddp::Verdict&) { ++orders; }, [&](const std::string& why) { lost = why; },
                                     [&](const rdzv::Order&) { ++orders; }});
  client.begin();
  const auto turn = [&] {
    (void)loop.run_once(0ms);
    client.tick();
  };
  const auto accept_one = [&] {
    Fd peer;
    for (int i = 0; i < 200 && peer.fd < 0; ++i) {
      peer.fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (peer.fd < 0) {
        turn();
        ::usleep(500);
      }
    }
    return peer;
  };
  {
    Fd peer = accept_one();
    FUZZ_CHECK(peer.fd >= 0);
    if (challenge_first) {
      const auto line = rdzv::encode(
          rdzv::Challenge{rdzv::kProtocolVersion, "fuzz", kRun, rdzv::random_hex(rdzv::kNonceBytes)}.to_message());
      (void)::send(peer.fd, line.data(), line.size(), MSG_NOSIGNAL);
      turn();
    }
    for (std::size_t pos = 0; pos < stream.size(); pos += chunk) {
      const auto part = stream.substr(pos, chunk);
      if (::send(peer.fd, part.data(), part.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN) break;
      turn();
    }
    for (int i = 0; i < 5; ++i) turn();
  }  // the port hangs up
  for (int i = 0; i < 5; ++i) turn();
  FUZZ_CHECK(lost.empty());  // nothing the port said ended the rendezvous
  FUZZ_CHECK(orders == 0);   // nor started, stopped or ended anything
  return 0;
}
