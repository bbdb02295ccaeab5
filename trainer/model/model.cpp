#include "model/model.hpp"

#include <cmath>
#include <random>

namespace ddp::train {

std::string ModelSpec::describe() const {
  std::string out = kind == ModelKind::mlp ? "mlp " : kind == ModelKind::autoencoder ? "autoencoder " : "linear ";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "-" : "") + std::to_string(dims[i]);
  return out + (loss == LossKind::cross_entropy ? " (cross-entropy)" : " (MSE)");
}

Result<ModelSpec> make_model_spec(const std::string& kind, const std::vector<int>& hidden, bool hidden_given,
                                  int input_width, int classes) {
  ModelSpec spec;
  std::vector<int> inner = hidden;
  if (kind == "mlp") {
    spec.kind = ModelKind::mlp;
    spec.loss = LossKind::cross_entropy;
    if (!hidden_given) inner = {256, 128};
    if (classes < 2) return fail("--model mlp needs labelled data with at least 2 classes");
  } else if (kind == "ae") {
    spec.kind = ModelKind::autoencoder;
    spec.loss = LossKind::mse;
    if (!hidden_given) inner = {128, 128, 128};
    if (inner.empty()) return fail("--model ae needs at least one hidden layer (--hidden 128,128,128)");
  } else if (kind == "linear") {
    spec.kind = ModelKind::linear;
    spec.loss = LossKind::mse;
    if (hidden_given && !inner.empty()) return fail("--model linear has no hidden layers; drop --hidden");
    inner.clear();
  } else {
    return fail("--model " + kind + ": unknown model; use mlp, ae or linear");
  }
  for (int h : inner)
    if (h <= 0 || h > (1 << 20)) return fail("--hidden: layer width " + std::to_string(h) + " is out of range");
  spec.dims.push_back(input_width);
  spec.dims.insert(spec.dims.end(), inner.begin(), inner.end());
  spec.dims.push_back(spec.kind == ModelKind::mlp ? classes : spec.kind == ModelKind::autoencoder ? input_width : 1);
  return spec;
}

std::vector<float> initial_parameters(const ModelSpec& spec, const ParamLayout& layout, std::uint64_t seed) {
  std::vector<float> params(layout.total, 0.0f);
  std::mt19937 gen{std::uint32_t(seed)};
  for (std::size_t l = 0; l + 1 < spec.dims.size(); ++l) {
    const int in = spec.dims[l];
    const int out = spec.dims[l + 1];
    const float bound = 1.0f / std::sqrt(float(in));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (std::size_t i = 0; i < std::size_t(out) * in; ++i) params[layout.weight_offset[l] + i] = dist(gen);
    for (int i = 0; i < out; ++i) params[layout.bias_offset[l] + std::size_t(i)] = dist(gen);
  }
  return params;
}

Model::Model(const ModelSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch)
    : spec_(spec), layout_(layout), ops_(ops) {
  params_ = ops_.alloc(layout_.total);
  acts_.push_back(nullptr);   // the input is the caller's
  grads_.push_back(nullptr);  // nobody needs d(loss)/d(input)
  for (std::size_t l = 1; l < spec_.dims.size(); ++l) {
    acts_.push_back(ops_.alloc(std::size_t(max_batch) * spec_.dims[l]));
    grads_.push_back(ops_.alloc(std::size_t(max_batch) * spec_.dims[l]));
  }
}

Model::~Model() {
  ops_.release(params_);
  for (float* p : acts_)
    if (p) ops_.release(p);
  for (float* p : grads_)
    if (p) ops_.release(p);
}

void Model::forward(const float* input, int batch) {
  const std::size_t layers = spec_.dims.size() - 1;
  for (std::size_t l = 0; l < layers; ++l) {
    const float* x = l == 0 ? input : acts_[l];
    float* y = acts_[l + 1];
    const int in = spec_.dims[l];
    const int out = spec_.dims[l + 1];
    ops_.linear_forward(x, params_ + layout_.weight_offset[l], params_ + layout_.bias_offset[l], y, batch, in, out);
    if (l + 1 < layers) ops_.relu_forward(y, y, std::size_t(batch) * out);  // in place: backward needs only y
  }
}

void Model::backward(const float* input, int batch, float* param_grads, const std::function<void(int)>& layer_done) {
  const std::size_t layers = spec_.dims.size() - 1;
  for (std::size_t l = layers; l-- > 0;) {
    const float* x = l == 0 ? input : acts_[l];
    const int in = spec_.dims[l];
    const int out = spec_.dims[l + 1];
    float* dx = l == 0 ? nullptr : grads_[l];
    ops_.linear_backward(x, params_ + layout_.weight_offset[l], grads_[l + 1], param_grads + layout_.weight_offset[l],
                         param_grads + layout_.bias_offset[l], dx, batch, in, out);
    if (dx) ops_.relu_backward(acts_[l], dx, dx, std::size_t(batch) * in);  // through the ReLU before layer l
    layer_done(int(l));
  }
}

}  // namespace ddp::train
