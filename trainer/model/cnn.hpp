// The network of PyTorch's MNIST example (examples/mnist/main.py, `Net`),
// its second ReLU and the pooling in one pass (same values and gradients):
// conv 1->32 3x3, ReLU, conv 32->64 3x3, ReLU, 2x2 max pooling, dropout
// 0.25, flatten, linear 9216->128, ReLU, dropout 0.5, linear 128->10; its
// log-softmax and NLL loss are the trainer's cross-entropy on the logits.
// Forward and backward layer by layer over an Ops (llm.c style): every
// buffer allocated once, up front. Parameter layers, in forward order:
// 0 conv1, 1 conv2, 2 fc1, 3 fc2 (what Model::backward's layer_done says).
#pragma once

#include <functional>
#include <vector>

#include "model/conv_shape.hpp"
#include "model/layout.hpp"
#include "model/ops.hpp"

namespace ddp::train {

struct CnnSpec {
  int channels = 1, height = 28, width = 28;
  int conv1 = 32, conv2 = 64, kernel = 3, hidden = 128, classes = 10;
  float dropout1 = 0.25f, dropout2 = 0.5f;

  ConvShape conv1_shape() const { return {channels, height, width, conv1, kernel}; }
  ConvShape conv2_shape() const {
    const ConvShape c1 = conv1_shape();
    return {conv1, c1.out_h(), c1.out_w(), conv2, kernel};
  }
  int pooled() const { return conv2 * (conv2_shape().out_h() / 2) * (conv2_shape().out_w() / 2); }  // 9216
  std::vector<LayerParams> param_layers() const;
  std::vector<int> fan_ins() const;  // PyTorch's init bound is 1 / sqrt(fan_in)
};

class CnnNet {
 public:
  CnnNet(const CnnSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch);
  ~CnnNet();
  CnnNet(const CnnNet&) = delete;
  CnnNet& operator=(const CnnNet&) = delete;

  // `train` null: evaluation (no dropout).
  void forward(const float* params, const float* input, int batch, const DropoutKey* train);
  void backward(const float* params, const float* input, int batch, float* param_grads,
                const std::function<void(int)>& layer_done);
  const float* output() const { return out_; }
  float* output_grad() { return g_out_; }

 private:
  float* buffer(std::size_t per_sample);
  const float* weight(const float* params, int layer) const { return params + layout_.weight_offset[layer]; }
  const float* bias(const float* params, int layer) const { return params + layout_.bias_offset[layer]; }

  CnnSpec spec_;
  ParamLayout layout_;
  Ops& ops_;
  int max_batch_;
  bool trained_ = false;  // the last forward ran with dropout
  std::vector<void*> owned_;
  float *c1_, *c2_, *pool_, *drop1_, *mask1_, *h_, *drop2_, *mask2_, *out_;
  float *g_out_, *g_h_, *g_pool_, *g_c2_, *g_c1_, *scratch_;
  int* where_;
};

}  // namespace ddp::train
