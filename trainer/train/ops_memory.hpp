// Ops memory with an owner: each buffer goes back to the Ops that allocated
// it when its owner goes, so no return path can leak it. Declare owners after
// the Ops they borrow (destroyed before it).
#pragma once

#include <cstddef>
#include <memory>

#include "data/dataset.hpp"
#include "dist/collectives.hpp"
#include "model/ops.hpp"
#include "train/step.hpp"

namespace ddp::train {

struct OpsRelease {
  Ops* ops = nullptr;
  void operator()(void* p) const { ops->release(p); }
};

// A buffer in ops memory (host for the CPU, device for CUDA), zero-filled.
template <class T>
using OpsArray = std::unique_ptr<T, OpsRelease>;

inline OpsArray<float> alloc_floats(Ops& ops, std::size_t n) { return {ops.alloc(n), OpsRelease{&ops}}; }
inline OpsArray<int> alloc_ints(Ops& ops, std::size_t n) { return {ops.alloc_int(n), OpsRelease{&ops}}; }

// A data split uploaded to ops memory; `view` is what the step and
// evaluation read (its pointers stay valid while this lives, moves included).
struct OwnedSplit {
  OpsArray<float> features;
  OpsArray<int> labels;
  OpsArray<float> targets;
  DeviceSplit view;
};
OwnedSplit upload_split(Ops& ops, const Dataset& d);

// The flat gradient buffer and the optimizer's state.
struct OptimizerMemory {
  OpsArray<float> owned_grads;  // empty when the communicator lends its shared memory
  float* grads = nullptr;       // the one the step uses
  OpsArray<float> a;            // sgd: velocity; adam: first moment; adadelta: mean of g^2
  OpsArray<float> b;            // adam: second moment; adadelta: mean of squared updates; empty for sgd
};
// The gradients live in shared memory when the backend reduces in place.
OptimizerMemory alloc_optimizer_memory(Ops& ops, Collectives& comm, std::size_t total_floats,
                                       std::size_t parameters, bool second_state);

}  // namespace ddp::train
