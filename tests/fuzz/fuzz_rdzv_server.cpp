// The rendezvous coordinator (node 0's agent) as a peer on the network sees
// it: a real Coordinator on a loopback port, one TCP client whose bytes the
// fuzzer chooses. Exercises accept, the challenge, the line assembler, the
// decoder and every message handler, before and after authentication.
//
// Input: byte 0 says who the client is: bit 0 clear, a stranger (no secret:
// the bytes arrive before any authentication); bit 0 set, an authenticated
// agent of node (byte 0 >> 1) % 3 (the harness answers the challenge with the
// job's secret, then sends the bytes, each complete line sealed as the
// agent's connection seals it: what a buggy or compromised node could
// send). Byte 1 sets the chunk size the bytes arrive in; the rest is the
// stream. After it the client closes, and the coordinator must cope.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "ddp/wire/rdzv_auth.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "event_loop.hpp"
#include "fuzz.hpp"
#include "job/coordinator.hpp"

namespace {

namespace rdzv = ddp::rdzv;
using namespace std::chrono_literals;

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
constexpr char kRun[] = "fuzz-run";

// A blocking loopback client; the coordinator's loop runs in this thread, so
// every wait below gives it turns.
struct Client {
  int fd = -1;
  std::string inbox;
  ~Client() {
    if (fd < 0) return;
    // Reset instead of FIN: millions of runs must not fill the port range with TIME_WAIT.
    const linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
  }
  bool connect_to(std::uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Loopback completes the handshake in the kernel: EINPROGRESS is as good as done.
    // EINTR (libFuzzer's SIGALRM watchdog) leaves a non-blocking connect going, as EINPROGRESS does.
    return fd >= 0 && (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno == EINPROGRESS ||
                       errno == EINTR);
  }
  void drain() {
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) inbox.append(buf, std::size_t(n));
  }
  // The next line from the coordinator, letting it run meanwhile.
  std::optional<rdzv::Message> read_message(ddp::agent::EventLoop& loop, ddp::agent::Coordinator& coordinator) {
    for (int turn = 0; turn < 50; ++turn) {
      drain();
      if (const auto nl = inbox.find('\n'); nl != std::string::npos) {
        auto m = rdzv::decode(inbox.substr(0, nl));
        inbox.erase(0, nl + 1);
        FUZZ_CHECK(m.ok());  // the coordinator only ever writes valid lines
        return *m;
      }
      (void)loop.run_once(2ms);
      coordinator.tick();
    }
    return std::nullopt;
  }
  void send_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // closed by the coordinator, or its buffer full: it stopped reading us
      bytes.remove_prefix(std::size_t(n));
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = (spdlog::set_level(spdlog::level::off), true);
  (void)quiet;
  if (size < 2) return 0;
  const bool authenticated = data[0] & 1;
  const std::uint32_t node = (data[0] >> 1) % 3;
  const std::size_t chunk = 1 + data[1] % 128;
  std::string stream(ddp::fuzz::as_text(data + 2, size - 2));

  ddp::agent::EventLoop loop;
  ddp::NodePlan plan;
  plan.run_id = kRun;
  plan.nnodes = 3;
  plan.master_addr = "127.0.0.1";
  ddp::agent::CoordinatorSettings settings;
  settings.secret = kSecret;
  settings.master_addr = "127.0.0.1";
  settings.claim_master_port = [](std::uint32_t attempt) -> ddp::Result<ddp::PortClaim> {
    return ddp::PortClaim(-1, std::uint16_t(29500 + attempt));  // unclaimed: nothing binds it here
  };
  ddp::agent::Coordinator coordinator(loop, plan, std::move(settings));
  FUZZ_CHECK(coordinator.listen({0}, ddp::PortRange{1024, 65535}));

  Client client;
  FUZZ_CHECK(client.connect_to(coordinator.port()));
  const auto challenge = client.read_message(loop, coordinator);
  FUZZ_CHECK(challenge && challenge->verb == "CHALLENGE");
  if (authenticated) {
    const auto nonce = challenge->get("nonce");
    FUZZ_CHECK(nonce && rdzv::check_nonce(*nonce));
    rdzv::Response response;
    response.node = node;
    response.cnonce = rdzv::random_hex(rdzv::kNonceBytes);
    const rdzv::HandshakeFacts facts{kSecret, kRun, node, *nonce, response.cnonce, {"127.0.0.1", coordinator.port()}};
    response.mac = rdzv::client_proof(facts);
    response.release = "fuzz";
    client.send_all(rdzv::encode(response.to_message()));
    const auto welcome = client.read_message(loop, coordinator);
    FUZZ_CHECK(welcome && welcome->verb == "WELCOME");
    rdzv::Seal seal(rdzv::session_key(facts), rdzv::Seal::Side::Agent);
    std::string sealed;
    std::size_t at = 0;
    for (std::size_t nl; (nl = stream.find('\n', at)) != std::string::npos; at = nl + 1)
      sealed += seal.close(std::string_view(stream).substr(at, nl - at)) + "\n";
    stream = sealed + stream.substr(at);
  }
  for (std::size_t pos = 0; pos < stream.size(); pos += chunk) {
    client.send_all(stream.substr(pos, chunk));
    (void)loop.run_once(0ms);
    coordinator.tick();
    client.drain();
  }
  for (int turn = 0; turn < 3; ++turn) (void)loop.run_once(1ms);
  ::shutdown(client.fd, SHUT_RDWR);
  for (int turn = 0; turn < 50 && coordinator.open_peers() > 0; ++turn) {
    (void)loop.run_once(1ms);
    coordinator.tick();
  }
  // Whatever it was sent, a closed connection leaves nothing behind.
  FUZZ_CHECK(coordinator.open_peers() == 0);
  return 0;
}
