// Collectives: what data parallelism needs from the network, one
// implementation per backend. GlooCollectives (process_group/gloo_collectives.cpp)
// reduces host memory over TCP on a communication thread; NcclCollectives
// (cuda/nccl_collectives.cu) reduces device memory on its own CUDA stream.
// Counts are elements (float32), never bytes.
#pragma once

#include <cstddef>
#include <string>

#include "ddp/base/result.hpp"

namespace ddp::train {

class Collectives {
 public:
  virtual ~Collectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;

  // Blocking: returns once `data` holds the result (start-up and evaluation).
  virtual Status broadcast(float* data, std::size_t count, int root) = 0;
  virtual Status allreduce_sum(float* data, std::size_t count) = 0;

  // The gradient path. start_bucket() returns at once; the reduction
  // (data *= prescale, then SUM over ranks) runs in the background, overlapping
  // whatever the caller computes next. Buckets are reduced in the order they
  // were started, which must be the same order on every rank.
  // finish_buckets() returns once every started bucket is reduced (GPU: once
  // work queued after it on the compute stream is ordered after them; no host
  // wait) and reports a failed reduction, naming the cause.
  virtual void start_bucket(float* data, std::size_t count, float prescale) = 0;
  virtual Status finish_buckets() = 0;

  // CUDA graphs (train/step.cpp): while a step is being captured its
  // collectives are recorded, not run, so a backend that watches pending work
  // must not wait for them; after each replay of the captured step it is told
  // to watch the compute stream, which holds the whole step. No-ops elsewhere.
  virtual void set_capturing(bool capturing) { (void)capturing; }
  virtual Status watch_compute_stream() { return Ok{}; }

  // Where the flat gradient buffer (all buckets) should live. A backend that
  // reduces in place across processes (shared memory between the ranks of a
  // node) hands out its own memory so buckets need no copy; nullptr = the
  // caller allocates it with its Ops.
  virtual float* gradient_memory(std::size_t count) {
    (void)count;
    return nullptr;
  }
};

}  // namespace ddp::train
