#include "process_group/shm_group.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <thread>
#include <utility>

#include "ddp/base/parse.hpp"

namespace ddp::train {

namespace {
constexpr std::size_t kMaxLocal = 256;
constexpr std::size_t kLine = 64;
constexpr std::uint64_t kShmMagic = 0x64647073686d3031ULL;  // "ddpshm01"

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// A descriptor closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);  // ours closes with `other`
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The node's segment: its name in /dev/shm, the nonce that proves to the
// other local ranks that they mapped the same one, and a descriptor on it.
struct Segment {
  std::string name;
  std::uint64_t nonce = 0;
  Fd fd;
};

// Local rank 0: a new segment of `bytes`, under a name nobody else uses.
Result<Segment> create_segment(std::size_t bytes) {
  std::random_device rd;
  Segment seg;
  seg.nonce = (std::uint64_t(rd()) << 32) | rd();
  seg.name = "/ddp-train-" + std::to_string(::getpid()) + "-" + std::to_string(seg.nonce % 1000000007ULL);
  seg.fd = Fd(::shm_open(seg.name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600));
  if (seg.fd.get() < 0) return fail("shm_open " + seg.name + ": " + std::strerror(errno));
  if (::ftruncate(seg.fd.get(), off_t(bytes)) != 0) {
    const std::string err = std::strerror(errno);
    ::shm_unlink(seg.name.c_str());
    return fail("shared memory of " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + err);
  }
  return seg;
}

// Local rank 0 tells the others the segment's name and nonce, under `key`
// as "<name> <nonce>".
Status publish_segment(Session& session, const std::string& key, const Segment& seg) {
  const std::string value = seg.name + " " + std::to_string(seg.nonce);
  return session.store->set(key, Bytes(value.begin(), value.end()));
}

// The other local ranks: the segment that local rank 0 published.
Result<Segment> open_published_segment(Session& session, const std::string& key, std::chrono::milliseconds timeout) {
  auto value = session.store->get(key, timeout);
  if (!value) return fail(value.error());
  const std::string text(value->begin(), value->end());
  const std::size_t space = text.find(' ');
  auto nonce = parse_uint(space == std::string::npos ? "" : text.substr(space + 1), 0, UINT64_MAX, "nonce");
  if (!nonce) return fail("shared memory: local rank 0 published '" + text + "' (" + nonce.error() + ")");
  Segment seg;
  seg.name = text.substr(0, space);
  seg.nonce = *nonce;
  seg.fd = Fd(::shm_open(seg.name.c_str(), O_RDWR | O_CLOEXEC, 0600));
  if (seg.fd.get() < 0)
    return fail("shared memory " + seg.name + " of local rank 0 is not visible here (" + std::strerror(errno) +
                "): are LOCAL_RANK/GROUP_RANK right, and is /dev/shm shared between the ranks of a node?");
  return seg;
}

// Local rank 0 unlinks the name as join() returns, after the others have
// mapped it (the mappings live on without it) or after a failure: either
// way nothing is left in /dev/shm.
struct UnlinkOnReturn {
  const std::string* name = nullptr;
  ~UnlinkOnReturn() {
    if (name) ::shm_unlink(name->c_str());
  }
};

}  // namespace

// The segment's start. (Its types are its own, not in the anonymous namespace:
// a class of the header's must not depend on one; -Wsubobject-linkage.)
struct ShmGroup::Header {
  struct alignas(kLine) Counter {
    std::atomic<std::uint64_t> value;
    std::atomic<std::int64_t> pid;
  };
  std::uint64_t magic;
  std::uint64_t nonce;
  std::uint64_t local_size;
  std::uint64_t slot_floats;
  Counter counters[kMaxLocal];
};

float* ShmGroup::slot(int local_rank) const {
  const std::size_t header = round_up(sizeof(Header), 4096);
  return reinterpret_cast<float*>(static_cast<char*>(base_) + header +
                                  std::size_t(local_rank) * round_up(slot_floats_ * sizeof(float), 4096));
}

Result<std::unique_ptr<ShmGroup>> ShmGroup::join(Session& session, int node, int local_rank, int local_size,
                                                  std::size_t slot_floats, std::chrono::milliseconds timeout) {
  if (local_size < 1 || std::size_t(local_size) > kMaxLocal)
    return fail("shared memory: " + std::to_string(local_size) + " ranks on one node is beyond " +
                std::to_string(kMaxLocal));
  std::unique_ptr<ShmGroup> g(new ShmGroup());
  g->local_rank_ = local_rank;
  g->local_size_ = local_size;
  g->slot_floats_ = slot_floats;
  g->bytes_ = round_up(sizeof(Header), 4096) + std::size_t(local_size) * round_up(slot_floats * sizeof(float), 4096);
  // Everyone learns the name (and the nonce that proves it is the same memory).
  const std::string key = session.key("shm/" + std::to_string(node));
  auto seg = local_rank == 0 ? create_segment(g->bytes_) : open_published_segment(session, key, timeout);
  if (!seg) return fail(seg.error());
  const UnlinkOnReturn unlink{local_rank == 0 ? &seg->name : nullptr};
  if (local_rank == 0)
    if (auto st = publish_segment(session, key, *seg); !st) return fail(st.error());
  void* base = ::mmap(nullptr, g->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, seg->fd.get(), 0);
  if (base == MAP_FAILED) return fail(std::string("mmap of shared memory: ") + std::strerror(errno));
  g->base_ = base;
  g->header_ = static_cast<Header*>(base);
  if (local_rank == 0)
    g->initialise_header(seg->nonce);
  else if (auto st = g->await_header(seg->name, seg->nonce, timeout); !st)
    return fail(st.error());
  g->header_->counters[local_rank].pid.store(::getpid());
  if (auto st = g->barrier(timeout); !st) return fail(st.error());
  return g;
}

// Local rank 0: the header, with the magic written last, once the rest is.
void ShmGroup::initialise_header(std::uint64_t nonce) {
  header_->nonce = nonce;
  header_->local_size = std::uint64_t(local_size_);
  header_->slot_floats = slot_floats_;
  for (std::size_t i = 0; i < kMaxLocal; ++i) {
    header_->counters[i].value.store(0);
    header_->counters[i].pid.store(0);
  }
  std::atomic_thread_fence(std::memory_order_release);
  std::atomic_ref<std::uint64_t>(header_->magic).store(kShmMagic, std::memory_order_release);
}

// The other local ranks: waits for the magic, then checks that the header is
// the one local rank 0 published.
Status ShmGroup::await_header(const std::string& name, std::uint64_t nonce, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::atomic_ref<std::uint64_t>(header_->magic).load(std::memory_order_acquire) != kShmMagic) {
    if (std::chrono::steady_clock::now() > deadline) return fail("shared memory " + name + " was never initialised");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (header_->nonce != nonce || header_->local_size != std::uint64_t(local_size_) ||
      header_->slot_floats != slot_floats_)
    return fail("shared memory " + name + " does not match what local rank 0 published (another job's?)");
  return Ok{};
}

ShmGroup::~ShmGroup() {
  if (base_) ::munmap(base_, bytes_);
}

Status ShmGroup::barrier(std::chrono::milliseconds timeout) {
  ++generation_;
  header_->counters[local_rank_].value.store(generation_, std::memory_order_release);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < local_size_; ++i) {
    Header::Counter& c = header_->counters[i];
    // Spin briefly (the peers are usually microseconds behind), then yield,
    // then sleep, checking now and then that the peer is still alive.
    for (std::uint64_t spins = 0; c.value.load(std::memory_order_acquire) < generation_; ++spins) {
      if (spins < 2000) continue;
      if (spins < 20000) {
        sched_yield();
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (spins % 256 == 0) {
        const pid_t pid = pid_t(c.pid.load());
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
          return fail("local rank " + std::to_string(i) + " (pid " + std::to_string(pid) +
                      ") died during an all-reduce");
        if (std::chrono::steady_clock::now() - start > timeout)
          return fail("local rank " + std::to_string(i) + " did not reach the all-reduce within " +
                      std::to_string(timeout.count() / 1000) + " s");
      }
    }
  }
  return Ok{};
}

}  // namespace ddp::train
