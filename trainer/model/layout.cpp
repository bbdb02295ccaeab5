#include "model/layout.hpp"

#include <algorithm>

namespace ddp::train {

ParamLayout plan_layout(const std::vector<int>& dims, std::size_t first_bucket_bytes, std::size_t bucket_bytes) {
  std::vector<LayerParams> layers;
  for (std::size_t l = 0; l + 1 < dims.size(); ++l)
    layers.push_back({std::size_t(dims[l + 1]) * std::size_t(dims[l]), std::size_t(dims[l + 1])});
  return plan_layout(layers, first_bucket_bytes, bucket_bytes);
}

ParamLayout plan_layout(const std::vector<LayerParams>& params, std::size_t first_bucket_bytes,
                        std::size_t bucket_bytes) {
  ParamLayout layout;
  const int layers = int(params.size());
  layout.weight_offset.assign(std::size_t(std::max(layers, 0)), 0);
  layout.bias_offset.assign(std::size_t(std::max(layers, 0)), 0);
  Bucket open;
  bool is_first = true;
  std::size_t offset = 0;
  auto place = [&](std::size_t count, int layer) {
    if (open.count == 0) open.offset = offset;
    offset += count;
    open.count += count;
    open.ready_after_layer = layer;  // layers arrive in descending order: the last one placed is the latest ready
    const std::size_t cap = is_first ? first_bucket_bytes : bucket_bytes;
    if (open.count * sizeof(float) >= cap) {
      layout.buckets.push_back(open);
      open = Bucket{};
      is_first = false;
    }
  };
  // Reverse parameter order: PyTorch's parameters() is w0, b0, w1, b1, ...
  for (int l = layers - 1; l >= 0; --l) {
    layout.bias_offset[std::size_t(l)] = offset;
    place(params[std::size_t(l)].biases, l);
    layout.weight_offset[std::size_t(l)] = offset;
    place(params[std::size_t(l)].weights, l);
  }
  layout.parameters = offset;
  layout.control_offset = offset;
  layout.total = offset + ParamLayout::kControlSlots;
  if (open.count > 0) {
    open.count += ParamLayout::kControlSlots;
    layout.buckets.push_back(open);
  } else if (!layout.buckets.empty()) {
    layout.buckets.back().count += ParamLayout::kControlSlots;
  } else {
    layout.buckets.push_back(Bucket{0, ParamLayout::kControlSlots, 0});
  }
  return layout;
}

std::string describe_buckets(const ParamLayout& layout) {
  std::string out;
  for (std::size_t i = 0; i < layout.buckets.size(); ++i) {
    const Bucket& b = layout.buckets[i];
    if (!out.empty()) out += " | ";
    out += "bucket " + std::to_string(i) + ": " + std::to_string(b.count) + " floats (" +
           std::to_string(b.count * sizeof(float) / 1024) + " KiB), ready after layer " +
           std::to_string(b.ready_after_layer + 1);
  }
  return out;
}

}  // namespace ddp::train
