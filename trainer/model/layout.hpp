// Where every parameter lives in the flat buffers, and how gradients are cut
// into all-reduce buckets. Pure: the unit tests check it without a model.
//
// PyTorch's Reducer lays gradients out in reverse parameter order (the order
// backward produces them) and closes a bucket once it reaches its cap: about
// 1 MiB for the first, so communication starts early, then about 25 MiB. A
// tensor is never split. We know our layer order, so the layout is right from
// step one (PyTorch rebuilds its buckets after observing step one).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddp::train {

struct Bucket {
  std::size_t offset = 0;  // first element in the flat gradient buffer
  std::size_t count = 0;   // elements, control slots included for the last bucket
  int ready_after_layer = 0;  // complete once this layer's backward has run
};

struct ParamLayout {
  std::vector<std::size_t> weight_offset;  // per layer, into the flat buffers
  std::vector<std::size_t> bias_offset;
  std::size_t parameters = 0;  // elements that are parameters
  // Two floats after the parameters ride with the last bucket's all-reduce:
  // the step's loss and a "stop requested" flag, so every rank learns both
  // with no extra collective (written by the step: train/step.cpp's
  // StepProgram, train/gpt_task.cpp; read back by StepReadback).
  std::size_t control_offset = 0;
  static constexpr std::size_t kControlSlots = 2;
  std::size_t total = 0;  // parameters + control slots
  std::vector<Bucket> buckets;  // in launch order
};

// One layer's parameters: a weight tensor and a bias, in elements.
struct LayerParams {
  std::size_t weights = 0;
  std::size_t biases = 0;
};

// Layers in forward order (the CNN's two convolutions and two linear layers).
ParamLayout plan_layout(const std::vector<LayerParams>& layers, std::size_t first_bucket_bytes,
                        std::size_t bucket_bytes);
// dims: layer widths, input first (784,256,128,10 = three linear layers).
ParamLayout plan_layout(const std::vector<int>& dims, std::size_t first_bucket_bytes, std::size_t bucket_bytes);

// "bucket 0: 33,034 floats (layers 3-2) | bucket 1: ..." for --verbose.
std::string describe_buckets(const ParamLayout& layout);

}  // namespace ddp::train
