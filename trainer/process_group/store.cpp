#include "process_group/store.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace ddp::train {
namespace {

constexpr std::uint8_t kSet = 1;
constexpr std::uint8_t kGet = 2;
constexpr std::uint8_t kOk = 10;
constexpr std::uint8_t kValue = 11;
constexpr std::uint8_t kMissing = 12;
constexpr std::size_t kMaxKey = 1024;
constexpr std::size_t kMaxValue = 4u << 20;
// All values together: a run stores a few addresses, shapes and ids (kilobytes);
// a peer looping over new keys must not take rank 0's memory.
constexpr std::size_t kMaxStoredBytes = 256u << 20;

void put_u32(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(std::uint8_t(p[i])) << (8 * i);
  return v;
}

Bytes frame(std::uint8_t op, const std::string& key, const Bytes& value) {
  Bytes out;
  out.reserve(9 + key.size() + value.size());
  out.push_back(char(op));
  put_u32(out, std::uint32_t(key.size()));
  out.insert(out.end(), key.begin(), key.end());
  put_u32(out, std::uint32_t(value.size()));
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

// A complete frame at the front of `buf`: its length, 0 if incomplete, -1 if it
// breaks the limits.
long frame_length(const Bytes& buf) {
  if (buf.size() < 5) return 0;
  const std::uint32_t key_len = get_u32(buf.data() + 1);
  if (key_len > kMaxKey) return -1;
  if (buf.size() < 9 + key_len) return 0;
  const std::uint32_t value_len = get_u32(buf.data() + 5 + key_len);
  if (value_len > kMaxValue) return -1;
  const std::size_t total = 9 + std::size_t(key_len) + value_len;
  return buf.size() < total ? 0 : long(total);
}

bool send_all(int fd, const Bytes& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;  // a peer that stops reading is dropped
      continue;
    }
    if (n <= 0) return false;
    sent += std::size_t(n);
  }
  return true;
}


}  // namespace

std::string store_key(const std::string& run_id, int attempt, const std::string& name) {
  return run_id + "/" + std::to_string(attempt) + "/" + name;
}

// ---------------------------------------------------------------- server

// The server's running part: the listening socket, the values, and the
// thread that serves them (StoreServer's pimpl).
struct StoreServer::Impl {
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};
  std::uint16_t port = 0;
  std::size_t max_clients = 0;
  std::map<std::string, Bytes> data;
  std::size_t stored_bytes = 0;  // keys and values in `data`
  std::thread thread;

  struct Client {
    int fd;
    Bytes in;  // received, not yet a complete frame
  };

  void serve();
  bool read_from(Client& client);
  std::optional<Bytes> answer(std::uint8_t op, const std::string& key, Bytes value);
  // False when out of descriptors: the caller stops polling the listening
  // socket for a while (level-triggered, it would wake the loop for ever).
  bool accept_client(std::vector<Client>& clients) const;
  ~Impl() {
    if (thread.joinable()) {
      const char c = 'q';
      (void)!::write(wake_pipe[1], &c, 1);
      thread.join();
    }
    for (int fd : {listen_fd, wake_pipe[0], wake_pipe[1]})
      if (fd >= 0) ::close(fd);
  }
};

// Until a byte arrives on the wake pipe (the destructor).
void StoreServer::Impl::serve() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kAcceptPause = std::chrono::milliseconds(100);
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  Clock::time_point accept_after{};  // out of descriptors: the listening socket rests until then
  for (;;) {
    const auto now = Clock::now();
    const bool resting = now < accept_after;
    fds.clear();
    fds.push_back({wake_pipe[0], POLLIN, 0});
    fds.push_back({listen_fd, short(resting ? 0 : POLLIN), 0});
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    const int timeout_ms =
        resting ? int(std::chrono::duration_cast<std::chrono::milliseconds>(accept_after - now).count()) + 1 : -1;
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    std::vector<bool> drop(clients.size(), false);
    for (std::size_t i = 0; i < clients.size(); ++i)
      if (fds[i + 2].revents) drop[i] = !read_from(clients[i]);
    for (std::size_t i = clients.size(); i-- > 0;)
      if (drop[i]) {
        ::close(clients[i].fd);
        clients.erase(clients.begin() + long(i));
      }
    if ((fds[1].revents & POLLIN) && !accept_client(clients)) accept_after = Clock::now() + kAcceptPause;
  }
}

// Reads what `client` sent and answers each complete request in it. False:
// close this connection (closed by the peer, broken, oversized or over budget).
bool StoreServer::Impl::read_from(Client& client) {
  char buf[65536];
  const ssize_t n = ::recv(client.fd, buf, sizeof buf, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  Bytes& in = client.in;
  in.insert(in.end(), buf, buf + n);
  for (long len; (len = frame_length(in)) != 0;) {
    if (len < 0) return false;  // oversized: close this connection only
    const std::uint8_t op = std::uint8_t(in[0]);
    const std::uint32_t key_len = get_u32(in.data() + 1);
    std::string key(in.data() + 5, key_len);
    Bytes value(in.begin() + 9 + key_len, in.begin() + len);
    in.erase(in.begin(), in.begin() + len);
    const std::optional<Bytes> reply = answer(op, key, std::move(value));
    if (!reply || !send_all(client.fd, *reply)) return false;
  }
  return true;
}

// The reply to one request; nothing for an unknown op or a SET over the
// store's budget (the caller closes that connection only).
std::optional<Bytes> StoreServer::Impl::answer(std::uint8_t op, const std::string& key, Bytes value) {
  if (op == kSet) {
    const auto old = data.find(key);
    const std::size_t replaced = old == data.end() ? 0 : old->first.size() + old->second.size();
    if (stored_bytes - replaced + key.size() + value.size() > kMaxStoredBytes) return std::nullopt;
    stored_bytes += key.size() + value.size() - replaced;
    data[key] = std::move(value);
    return frame(kOk, "", {});
  }
  if (op == kGet) {
    auto it = data.find(key);
    return it == data.end() ? frame(kMissing, "", {}) : frame(kValue, "", it->second);
  }
  return std::nullopt;
}

bool StoreServer::Impl::accept_client(std::vector<Client>& clients) const {
  // Non-blocking, so send_all's 5 s bound holds: a client that stops
  // reading is dropped instead of stalling every rank's bootstrap.
  const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM;
  if (clients.size() >= max_clients) {
    ::close(fd);
    return true;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  clients.push_back({fd, {}});
  return true;
}

Result<std::unique_ptr<StoreServer>> StoreServer::listen(std::uint16_t port, std::size_t max_clients) {
  auto impl = std::make_unique<Impl>();
  impl->max_clients = max_clients;
  if (::pipe2(impl->wake_pipe, O_CLOEXEC) != 0) return fail("store: pipe: " + errno_text());
  impl->listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (impl->listen_fd < 0) return fail("store: socket: " + errno_text());
  const int one = 1;
  // SO_REUSEADDR as PyTorch's TCPStore: a restarted attempt may reuse the port
  // while the previous attempt's connections sit in TIME_WAIT.
  ::setsockopt(impl->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(port);
  if (::bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return fail("rank 0 cannot host the bootstrap store on port " + std::to_string(port) + ": " + errno_text() +
                (errno == EADDRINUSE ? " (another process holds MASTER_PORT; pick another with --ddp-port or "
                                       "torchrun --master_port)"
                                     : ""));
  if (::listen(impl->listen_fd, 1024) != 0) return fail("store: listen: " + errno_text());
  socklen_t len = sizeof addr;
  ::getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl->port = ntohs(addr.sin_port);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->serve(); });
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(impl)));
}

StoreServer::StoreServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreServer::~StoreServer() = default;
std::uint16_t StoreServer::port() const { return impl_->port; }

// ---------------------------------------------------------------- client

Result<std::unique_ptr<StoreClient>> StoreClient::connect(const std::string& host, std::uint16_t port,
                                                         std::chrono::milliseconds timeout) {
  const std::string endpoint = host + ":" + std::to_string(port);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no attempt";
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) {
      last_error = std::string("cannot resolve ") + host + ": " + gai_strerror(rc);
    } else {
      for (addrinfo* ai = found; ai; ai = ai->ai_next) {
        const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
          ::freeaddrinfo(found);
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          return std::unique_ptr<StoreClient>(new StoreClient(fd, endpoint));
        }
        last_error = errno_text();
        ::close(fd);
      }
      ::freeaddrinfo(found);
    }
    if (std::chrono::steady_clock::now() + pause > deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
  return fail("could not reach rank 0's bootstrap store at " + endpoint + " within " +
              std::to_string(timeout.count() / 1000) + " s (" + last_error +
              "): is rank 0 running, and do MASTER_ADDR/MASTER_PORT name its host and port?");
}

StoreClient::~StoreClient() { ::close(fd_); }

Result<Bytes> StoreClient::request(std::uint8_t op, const std::string& key, const Bytes& value,
                                   std::uint8_t* reply_op) {
  if (key.size() > kMaxKey || value.size() > kMaxValue) return fail("store: key or value too large: " + key);
  if (!send_all(fd_, frame(op, key, value)))
    return fail("lost the connection to rank 0's bootstrap store at " + endpoint_ + " (did rank 0 exit?)");
  Bytes in;
  for (;;) {
    const long len = frame_length(in);
    if (len < 0) return fail("store: malformed reply from " + endpoint_);
    if (len > 0) {
      *reply_op = std::uint8_t(in[0]);
      const std::uint32_t key_len = get_u32(in.data() + 1);
      return Bytes(in.begin() + 9 + key_len, in.begin() + len);
    }
    char buf[65536];
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 30000);
    if (ready == 0) return fail("rank 0's bootstrap store at " + endpoint_ + " stopped answering");
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fail("lost the connection to rank 0's bootstrap store at " + endpoint_ + " (did rank 0 exit?)");
    in.insert(in.end(), buf, buf + n);
  }
}

Status StoreClient::set(const std::string& key, const Bytes& value) {
  std::uint8_t reply = 0;
  auto r = request(kSet, key, value, &reply);
  if (!r) return fail(r.error());
  if (reply != kOk) return fail("store: unexpected reply to SET " + key);
  return Ok{};
}

Result<std::vector<std::string>> StoreClient::missing(const std::vector<std::string>& keys) {
  std::vector<std::string> absent;
  for (const std::string& key : keys) {
    std::uint8_t reply = 0;
    auto r = request(kGet, key, {}, &reply);
    if (!r) return fail(r.error());
    if (reply == kMissing) absent.push_back(key);
  }
  return absent;
}

Result<Bytes> StoreClient::get(const std::string& key, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    std::uint8_t reply = 0;
    auto r = request(kGet, key, {}, &reply);
    if (!r) return r;
    if (reply == kValue) return r;
    if (std::chrono::steady_clock::now() >= deadline)
      return fail("timed out after " + std::to_string(timeout.count() / 1000) + " s waiting for '" + key +
                  "' in the bootstrap store at " + endpoint_);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

Status StoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  std::vector<std::string> pending = keys;
  for (;;) {
    auto absent = missing(pending);
    if (!absent) return fail(absent.error());
    pending = std::move(absent).value();
    if (pending.empty()) return Ok{};
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string list;
      for (const auto& k : pending) list += (list.empty() ? "" : ", ") + k;
      return fail("timed out after " + std::to_string(timeout.count() / 1000) + " s; still missing: " + list);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace ddp::train
