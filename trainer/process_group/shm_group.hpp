// The ranks of one node, sharing one POSIX shared-memory segment: a slot of
// gradient memory per local rank plus a small header with a sense-free
// counter barrier. This is how MPI (Open MPI's vader, MPICH's nemesis) and
// NCCL (its SHM transport) move data between processes of a node: through
// memory, not the TCP stack (on a 2-core VM, Gloo's loopback TCP takes about
// 1 ms for a 1 MiB all-reduce; shared memory, about a tenth of that).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ddp/base/result.hpp"
#include "process_group/bootstrap.hpp"

namespace ddp::train {

class ShmGroup {
 public:
  // Collective over the node's ranks: local rank 0 creates the segment and
  // publishes its name through the store; the others map it and prove it is
  // the same memory (a nonce). The name is unlinked as join returns (once
  // everyone has mapped it, or on a failure), so nothing is left in /dev/shm
  // whatever happens next.
  static Result<std::unique_ptr<ShmGroup>> join(Session& session, int node, int local_rank, int local_size,
                                                std::size_t slot_floats, std::chrono::milliseconds timeout);
  ~ShmGroup();
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  std::size_t slot_floats() const { return slot_floats_; }
  float* slot(int local_rank) const;

  // Returns once every local rank has called barrier() as often as we have.
  // A local rank that died (its pid is gone) or never comes within `timeout`
  // is an error naming it: a dead neighbour never hangs us.
  Status barrier(std::chrono::milliseconds timeout);

  struct Header;

 private:
  ShmGroup() = default;
  void initialise_header(std::uint64_t nonce);
  Status await_header(const std::string& name, std::uint64_t nonce, std::chrono::milliseconds timeout);
  Header* header_ = nullptr;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::size_t slot_floats_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace ddp::train
