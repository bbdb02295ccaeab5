#include "dist/shm_group.hpp"

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

namespace ddp::train {

namespace {
constexpr std::size_t kMaxLocal = 256;
constexpr std::size_t kLine = 64;
constexpr std::uint64_t kMagic = 0x64647073686d3031ULL;  // "ddpshm01"

struct alignas(kLine) Counter {
  std::atomic<std::uint64_t> value;
  std::atomic<std::int64_t> pid;
};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

struct ShmGroup::Header {
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
  const std::string key = session.key("shm/" + std::to_string(node));
  std::string name;
  std::uint64_t nonce = 0;
  int fd = -1;
  if (local_rank == 0) {
    std::random_device rd;
    nonce = (std::uint64_t(rd()) << 32) | rd();
    name = "/ddp-train-" + std::to_string(::getpid()) + "-" + std::to_string(nonce % 1000000007ULL);
    fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return fail("shm_open " + name + ": " + std::strerror(errno));
    if (::ftruncate(fd, off_t(g->bytes_)) != 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::shm_unlink(name.c_str());
      return fail("shared memory of " + std::to_string(g->bytes_ >> 20) + " MiB in /dev/shm: " + err);
    }
  }
  // Everyone learns the name (and the nonce that proves it is the same memory).
  if (local_rank == 0) {
    const std::string value = name + " " + std::to_string(nonce);
    if (auto st = session.store->set(key, Bytes(value.begin(), value.end())); !st) return fail(st.error());
  } else {
    auto value = session.store->get(key, timeout);
    if (!value) return fail(value.error());
    const std::string text(value->begin(), value->end());
    name = text.substr(0, text.find(' '));
    nonce = std::stoull(text.substr(text.find(' ') + 1));
    fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
      return fail("shared memory " + name + " of local rank 0 is not visible here (" + std::strerror(errno) +
                  "): are LOCAL_RANK/GROUP_RANK right, and is /dev/shm shared between the ranks of a node?");
  }
  void* base = ::mmap(nullptr, g->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return fail(std::string("mmap of shared memory: ") + std::strerror(errno));
  g->base_ = base;
  g->header_ = static_cast<Header*>(base);
  if (local_rank == 0) {
    g->header_->nonce = nonce;
    g->header_->local_size = std::uint64_t(local_size);
    g->header_->slot_floats = slot_floats;
    for (std::size_t i = 0; i < kMaxLocal; ++i) {
      g->header_->counters[i].value.store(0);
      g->header_->counters[i].pid.store(0);
    }
    std::atomic_thread_fence(std::memory_order_release);
    std::atomic_ref<std::uint64_t>(g->header_->magic).store(kMagic, std::memory_order_release);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::atomic_ref<std::uint64_t>(g->header_->magic).load(std::memory_order_acquire) != kMagic) {
      if (std::chrono::steady_clock::now() > deadline) return fail("shared memory " + name + " was never initialised");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (g->header_->nonce != nonce || g->header_->local_size != std::uint64_t(local_size) ||
        g->header_->slot_floats != slot_floats)
      return fail("shared memory " + name + " does not match what local rank 0 published (another job's?)");
  }
  g->header_->counters[local_rank].pid.store(::getpid());
  // Once all have mapped it, the name can go: the mapping lives on.
  if (auto st = g->barrier(timeout); !st) {
    if (local_rank == 0) ::shm_unlink(name.c_str());
    return fail(st.error());
  }
  if (local_rank == 0) ::shm_unlink(name.c_str());
  return g;
}

ShmGroup::~ShmGroup() {
  if (base_) ::munmap(base_, bytes_);
}

Status ShmGroup::barrier(std::chrono::milliseconds timeout) {
  ++generation_;
  header_->counters[local_rank_].value.store(generation_, std::memory_order_release);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < local_size_; ++i) {
    Counter& c = header_->counters[i];
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
