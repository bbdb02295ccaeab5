// The three models ddp-train knows, as stacks of linear layers with ReLU in
// between, and their explicit forward and backward over an Ops (llm.c style:
// every buffer allocated once, up front; nothing allocated inside a step).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "model/layout.hpp"
#include "model/ops.hpp"

namespace ddp::train {

enum class ModelKind { mlp, autoencoder, linear };
enum class LossKind { cross_entropy, mse };

struct ModelSpec {
  ModelKind kind = ModelKind::mlp;
  std::vector<int> dims;  // input width first, output width last
  LossKind loss = LossKind::cross_entropy;
  std::string describe() const;  // "mlp 784-256-128-10 (cross-entropy)"
};

// `hidden` empty = the model's default (mlp 256,128; ae 128,128,128; linear none).
Result<ModelSpec> make_model_spec(const std::string& kind, const std::vector<int>& hidden, bool hidden_given,
                                  int input_width, int classes);

// PyTorch's nn.Linear initialisation: weight and bias ~ U(-1/sqrt(in), 1/sqrt(in)),
// from a generator seeded with `seed` (host memory, flat layout).
std::vector<float> initial_parameters(const ModelSpec& spec, const ParamLayout& layout, std::uint64_t seed);

class Model {
 public:
  Model(const ModelSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Activations of `batch` rows through every layer; output() is the last one.
  void forward(const float* input, int batch);
  const float* output() const { return acts_.back(); }
  // Where the loss writes d(loss)/d(output) before backward().
  float* output_grad() { return grads_.back(); }
  // Accumulates parameter gradients into `grads` (layout order). After each
  // layer's backward, calls layer_done(layer) so the caller can launch the
  // all-reduce of buckets that just became complete.
  void backward(const float* input, int batch, float* param_grads, const std::function<void(int)>& layer_done);

  float* parameters() { return params_; }
  const ModelSpec& spec() const { return spec_; }

 private:
  ModelSpec spec_;
  ParamLayout layout_;
  Ops& ops_;
  float* params_ = nullptr;
  std::vector<float*> acts_;   // acts_[l] = output of layer l (post-ReLU for hidden layers)
  std::vector<float*> grads_;  // grads_[l] = d(loss)/d(acts_[l])
};

}  // namespace ddp::train
