// The shapes of the CNN's layers, shared by the Ops interface, the CPU and
// CUDA backends and the model. Activations are PyTorch's NCHW, row-major.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/host_device.hpp"  // the CUDA kernels read the shapes too


namespace ddp::train {

// A convolution with stride 1 and no padding (PyTorch's Conv2d defaults):
// x [B, in_c, in_h, in_w], weight [out_c, in_c, k, k], y [B, out_c, out_h, out_w].
struct ConvShape {
  int in_c = 1, in_h = 0, in_w = 0;
  int out_c = 0, k = 3;
  DDP_HD int out_h() const { return in_h - k + 1; }
  DDP_HD int out_w() const { return in_w - k + 1; }
  DDP_HD std::size_t in_size() const { return std::size_t(in_c) * in_h * in_w; }     // per sample
  DDP_HD std::size_t out_size() const { return std::size_t(out_c) * out_h() * out_w(); }
  DDP_HD std::size_t patch() const { return std::size_t(in_c) * k * k; }            // one column of im2col
  DDP_HD std::size_t weights() const { return std::size_t(out_c) * patch(); }
};

// Where dropout's coins come from (model/kernels.hpp, dropout_scale): the
// run's seed and the layer, and in ops memory the round (the global step)
// and each row's sample index, both written before the step runs.
struct DropoutKey {
  std::uint32_t seed = 0;
  int layer = 0;
  const int* round = nullptr;
  const int* sample = nullptr;
};

}  // namespace ddp::train
