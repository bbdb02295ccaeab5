#include "model/model.hpp"

#include <cmath>
#include <random>

namespace ddp::train {

std::string ModelSpec::describe() const {
  if (kind == ModelKind::gpt) return gpt.describe();
  if (kind == ModelKind::cnn)
    return "cnn " + std::to_string(cnn.channels) + "x" + std::to_string(cnn.height) + "x" + std::to_string(cnn.width) +
           " conv" + std::to_string(cnn.conv1) + "-conv" + std::to_string(cnn.conv2) + "-pool-dropout-" +
           std::to_string(cnn.hidden) + "-dropout-" + std::to_string(cnn.classes) + " (cross-entropy)";
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
  } else if (kind == "cnn") {
    if (hidden_given) return fail("--model cnn has a fixed shape (PyTorch's MNIST example); drop --hidden");
    if (input_width != 28 * 28)
      return fail("--model cnn takes 28 x 28 images (MNIST's and Fashion-MNIST's); these have " +
                  std::to_string(input_width) + " values each");
    if (classes < 2) return fail("--model cnn needs labelled data with at least 2 classes");
    spec.kind = ModelKind::cnn;
    spec.loss = LossKind::cross_entropy;
    spec.cnn.classes = classes;
    spec.dims = {input_width, classes};
    return spec;
  } else if (kind == "linear") {
    spec.kind = ModelKind::linear;
    spec.loss = LossKind::mse;
    if (hidden_given && !inner.empty()) return fail("--model linear has no hidden layers; drop --hidden");
    inner.clear();
  } else {
    return fail("--model " + kind + ": unknown model; use mlp, ae, linear or cnn");
  }
  for (int h : inner)
    if (h <= 0 || h > (1 << 20)) return fail("--hidden: layer width " + std::to_string(h) + " is out of range");
  spec.dims.push_back(input_width);
  spec.dims.insert(spec.dims.end(), inner.begin(), inner.end());
  spec.dims.push_back(spec.kind == ModelKind::mlp ? classes : spec.kind == ModelKind::autoencoder ? input_width : 1);
  return spec;
}

std::vector<LayerParams> ModelSpec::param_layers() const {
  if (kind == ModelKind::cnn) return cnn.param_layers();
  std::vector<LayerParams> layers;
  for (std::size_t l = 0; l + 1 < dims.size(); ++l)
    layers.push_back({std::size_t(dims[l + 1]) * std::size_t(dims[l]), std::size_t(dims[l + 1])});
  return layers;
}

std::vector<int> ModelSpec::fan_ins() const {
  if (kind == ModelKind::cnn) return cnn.fan_ins();
  return {dims.begin(), dims.end() - (dims.empty() ? 0 : 1)};
}

std::vector<float> initial_parameters(const ModelSpec& spec, const ParamLayout& layout, std::uint64_t seed) {
  std::vector<float> params(layout.total, 0.0f);
  std::mt19937 gen{std::uint32_t(seed)};
  const auto layers = spec.param_layers();
  const auto fan_ins = spec.fan_ins();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const float bound = 1.0f / std::sqrt(float(fan_ins[l]));
    std::uniform_real_distribution<float> dist(-bound, bound);
    for (std::size_t i = 0; i < layers[l].weights; ++i) params[layout.weight_offset[l] + i] = dist(gen);
    for (std::size_t i = 0; i < layers[l].biases; ++i) params[layout.bias_offset[l] + i] = dist(gen);
  }
  return params;
}

Model::Model(const ModelSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch)
    : spec_(spec), layout_(layout), ops_(ops) {
  params_ = ops_.alloc(layout_.total);
  if (spec_.kind == ModelKind::cnn) {
    cnn_ = std::make_unique<CnnNet>(spec_.cnn, layout_, ops_, max_batch);
    return;
  }
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

void Model::forward(const float* input, int batch, const DropoutKey* train) {
  if (cnn_) return cnn_->forward(params_, input, batch, train);
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
  if (cnn_) return cnn_->backward(params_, input, batch, param_grads, layer_done);
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
