#include "train/ops_memory.hpp"

namespace ddp::train {

OwnedSplit upload_split(Ops& ops, const Dataset& d) {
  OwnedSplit s;
  s.view.rows = d.rows;
  s.view.width = d.width;
  s.features = alloc_floats(ops, d.features.size());
  ops.upload(s.features.get(), d.features.data(), d.features.size());
  if (d.classes > 0) {
    s.labels = alloc_ints(ops, d.rows);
    ops.upload_int(s.labels.get(), d.labels.data(), d.rows);
  } else {
    s.view.target_width = d.target_width;
    s.targets = alloc_floats(ops, d.targets.size());
    ops.upload(s.targets.get(), d.targets.data(), d.targets.size());
  }
  s.view.features = s.features.get();
  s.view.labels = s.labels.get();
  s.view.targets = s.targets.get();
  return s;
}

OptimizerMemory alloc_optimizer_memory(Ops& ops, Collectives& comm, std::size_t total_floats,
                                       std::size_t parameters, bool second_state) {
  OptimizerMemory m;
  m.grads = comm.gradient_memory(total_floats);
  if (!m.grads) {
    m.owned_grads = alloc_floats(ops, total_floats);
    m.grads = m.owned_grads.get();
  }
  m.a = alloc_floats(ops, parameters);
  if (second_state) m.b = alloc_floats(ops, parameters);
  return m;
}

}  // namespace ddp::train
