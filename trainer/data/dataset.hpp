// The data a run trains on, as float features in host memory: IDX image sets
// (MNIST / Fashion-MNIST; pixels scaled to [0, 1] like torchvision's ToTensor)
// or synthetic sets generated from a seed, the same on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

struct Dataset {
  std::size_t rows = 0;
  int width = 0;                // features per row
  std::vector<float> features;  // rows x width
  int classes = 0;              // > 0: labelled (labels), 0: regression (targets)
  std::vector<int> labels;      // rows
  int target_width = 0;
  std::vector<float> targets;  // rows x target_width
  std::string origin;          // for messages: the file or "synthetic"
};

struct DataSplits {
  Dataset train;
  Dataset test;
};

// DIR holds train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
// t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]. limit > 0 keeps
// the first `limit` rows of a split (quick runs, tests).
Result<DataSplits> load_idx_dir(const std::string& dir, std::size_t limit_train, std::size_t limit_test);

// Synthetic data for `model` ("mlp": 784 features in [0, 1], 10 classes from a
// fixed random teacher; "ae": the same features; "linear": 20 standard normal
// features, y = x.w + b + small noise). The same seed gives the same data.
DataSplits synthetic_data(const std::string& model, std::size_t train_rows, std::size_t test_rows,
                          std::uint64_t seed);

}  // namespace ddp::train
