#include "model/cnn.hpp"

namespace ddp::train {

std::vector<LayerParams> CnnSpec::param_layers() const {
  const ConvShape a = conv1_shape(), b = conv2_shape();
  return {{a.weights(), std::size_t(conv1)},
          {b.weights(), std::size_t(conv2)},
          {std::size_t(hidden) * std::size_t(pooled()), std::size_t(hidden)},
          {std::size_t(classes) * std::size_t(hidden), std::size_t(classes)}};
}

std::vector<int> CnnSpec::fan_ins() const {
  return {int(conv1_shape().patch()), int(conv2_shape().patch()), pooled(), hidden};
}

CnnNet::CnnNet(const CnnSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch)
    : spec_(spec), layout_(layout), ops_(ops), max_batch_(max_batch) {
  const ConvShape a = spec_.conv1_shape(), b = spec_.conv2_shape();
  c1_ = buffer(a.out_size());
  c2_ = buffer(b.out_size());
  pool_ = buffer(spec_.pooled());
  drop1_ = buffer(spec_.pooled());
  mask1_ = buffer(spec_.pooled());
  h_ = buffer(spec_.hidden);
  drop2_ = buffer(spec_.hidden);
  mask2_ = buffer(spec_.hidden);
  out_ = buffer(spec_.classes);
  g_out_ = buffer(spec_.classes);
  g_h_ = buffer(spec_.hidden);
  g_pool_ = buffer(spec_.pooled());
  g_c2_ = buffer(b.out_size());
  g_c1_ = buffer(a.out_size());
  const std::size_t scratch = std::max(ops_.conv_scratch(a, max_batch), ops_.conv_scratch(b, max_batch));
  scratch_ = ops_.alloc(scratch);
  owned_.push_back(scratch_);
  where_ = ops_.alloc_int(std::size_t(max_batch) * spec_.pooled());
  owned_.push_back(where_);
}

CnnNet::~CnnNet() {
  for (void* p : owned_) ops_.release(p);
}

float* CnnNet::buffer(std::size_t per_sample) {
  float* p = ops_.alloc(per_sample * std::size_t(max_batch_));
  owned_.push_back(p);
  return p;
}

void CnnNet::forward(const float* params, const float* input, int batch, const DropoutKey* train) {
  const ConvShape a = spec_.conv1_shape(), b = spec_.conv2_shape();
  trained_ = train != nullptr;
  ops_.conv2d_forward(input, weight(params, 0), bias(params, 0), c1_, scratch_, batch, a);
  ops_.relu_forward(c1_, c1_, std::size_t(batch) * a.out_size());
  ops_.conv2d_forward(c1_, weight(params, 1), bias(params, 1), c2_, scratch_, batch, b);
  // The second ReLU runs inside the pooling: one pass over c2 instead of three.
  ops_.relu_max_pool2_forward(c2_, pool_, where_, batch * b.out_c, b.out_h(), b.out_w());
  const float* flat = pool_;
  if (train) {
    ops_.dropout_forward(pool_, drop1_, mask1_, batch, spec_.pooled(), spec_.dropout1, {train->seed, 0, train->round, train->sample});
    flat = drop1_;
  }
  ops_.linear_forward(flat, weight(params, 2), bias(params, 2), h_, batch, spec_.pooled(), spec_.hidden);
  ops_.relu_forward(h_, h_, std::size_t(batch) * spec_.hidden);
  const float* hidden = h_;
  if (train) {
    ops_.dropout_forward(h_, drop2_, mask2_, batch, spec_.hidden, spec_.dropout2, {train->seed, 1, train->round, train->sample});
    hidden = drop2_;
  }
  ops_.linear_forward(hidden, weight(params, 3), bias(params, 3), out_, batch, spec_.hidden, spec_.classes);
}

void CnnNet::backward(const float* params, const float* input, int batch, float* grads,
                      const std::function<void(int)>& layer_done) {
  const ConvShape a = spec_.conv1_shape(), b = spec_.conv2_shape();
  auto dw = [&](int l) { return grads + layout_.weight_offset[l]; };
  auto db = [&](int l) { return grads + layout_.bias_offset[l]; };
  const std::size_t hidden_n = std::size_t(batch) * spec_.hidden, pooled_n = std::size_t(batch) * spec_.pooled();
  ops_.linear_backward(trained_ ? drop2_ : h_, weight(params, 3), g_out_, dw(3), db(3), g_h_, batch, spec_.hidden,
                       spec_.classes);
  layer_done(3);
  if (trained_) ops_.multiply(g_h_, g_h_, mask2_, hidden_n);
  ops_.relu_backward(h_, g_h_, g_h_, hidden_n);
  ops_.linear_backward(trained_ ? drop1_ : pool_, weight(params, 2), g_h_, dw(2), db(2), g_pool_, batch,
                       spec_.pooled(), spec_.hidden);
  layer_done(2);
  if (trained_) ops_.multiply(g_pool_, g_pool_, mask1_, pooled_n);
  ops_.relu_max_pool2_backward(g_pool_, where_, g_c2_, batch * b.out_c, b.out_h(), b.out_w());
  ops_.conv2d_backward(c1_, weight(params, 1), g_c2_, dw(1), db(1), g_c1_, scratch_, batch, b);
  layer_done(1);
  ops_.relu_backward(c1_, g_c1_, g_c1_, std::size_t(batch) * a.out_size());
  ops_.conv2d_backward(input, weight(params, 0), g_c1_, dw(0), db(0), nullptr, scratch_, batch, a);
  layer_done(0);
}

}  // namespace ddp::train
