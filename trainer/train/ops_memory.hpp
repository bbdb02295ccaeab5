// The trainers' buffers in ops memory (OpsArray: model/ops.hpp).
#pragma once

#include <cstddef>
#include <memory>

#include "data/dataset.hpp"
#include "model/ops.hpp"
#include "process_group/collectives.hpp"
#include "train/step.hpp"

namespace ddp::train {

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
