// The models ddp-train knows: three stacks of linear layers with ReLU in
// between, and the CNN of PyTorch's MNIST example (model/cnn.hpp); their
// explicit forward and backward over an Ops (llm.c style: every buffer
// allocated once, up front; nothing allocated inside a step).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "model/cnn.hpp"
#include "model/gpt_config.hpp"
#include "model/layout.hpp"
#include "model/ops.hpp"

namespace ddp::train {

enum class ModelKind { mlp, autoencoder, linear, cnn, gpt };
enum class LossKind { cross_entropy, mse };

struct ModelSpec {
  ModelKind kind = ModelKind::mlp;
  std::vector<int> dims;  // input width first, output width last (the CNN: 784, 10)
  LossKind loss = LossKind::cross_entropy;
  CnnSpec cnn;                   // kind cnn
  GptConfig gpt;                 // kind gpt (trained by train/gpt_task.cpp, not by Model)
  std::string describe() const;  // "mlp 784-256-128-10 (cross-entropy)"
  std::vector<LayerParams> param_layers() const;  // forward order
  std::vector<int> fan_ins() const;
};

// `hidden` empty = the model's default (mlp 256,128; ae 128,128,128; linear
// none; the CNN has none to set). The CNN takes 28 x 28 images.
Result<ModelSpec> make_model_spec(const std::string& kind, const std::vector<int>& hidden, bool hidden_given,
                                  int input_width, int classes);

// PyTorch's nn.Linear and nn.Conv2d initialisation: weight and bias ~
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
// from a generator seeded with `seed` (host memory, flat layout).
std::vector<float> initial_parameters(const ModelSpec& spec, const ParamLayout& layout, std::uint64_t seed);

class Model {
 public:
  Model(const ModelSpec& spec, const ParamLayout& layout, Ops& ops, int max_batch);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Activations of `batch` rows through every layer; output() is the last
  // one. `train`: where dropout's coins come from (the CNN); null when
  // evaluating, and for the models without dropout.
  void forward(const float* input, int batch, const DropoutKey* train = nullptr);
  const float* output() const { return cnn_ ? cnn_->output() : acts_.back(); }
  // Where the loss writes d(loss)/d(output) before backward().
  float* output_grad() { return cnn_ ? cnn_->output_grad() : grads_.back(); }
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
  std::unique_ptr<CnnNet> cnn_;
};

}  // namespace ddp::train
