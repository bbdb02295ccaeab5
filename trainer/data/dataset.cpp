#include "data/dataset.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <random>

#include "data/idx.hpp"

namespace ddp::train {
namespace {

// "name" or "name.gz", whichever exists (Debian ships .gz).
std::string find_file(const std::string& dir, const std::string& name) {
  struct stat st {};
  for (const std::string& candidate : {dir + "/" + name, dir + "/" + name + ".gz"})
    if (::stat(candidate.c_str(), &st) == 0) return candidate;
  return "";
}

Result<Dataset> load_split(const std::string& dir, const std::string& prefix, std::size_t limit) {
  const std::string images_path = find_file(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(dir, prefix + "-labels-idx1-ubyte");
  if (images_path.empty() || labels_path.empty())
    return fail("--data " + dir + ": no " + prefix + "-images-idx3-ubyte[.gz] / " + prefix +
                "-labels-idx1-ubyte[.gz] there (MNIST layout; Debian's dataset-fashion-mnist installs them in "
                "/usr/share/datasets/fashion-mnist)");
  auto images = read_idx(images_path);
  if (!images) return fail(images.error());
  auto labels = read_idx(labels_path);
  if (!labels) return fail(labels.error());
  if (images->dims.size() < 2) return fail(images_path + ": expected images (at least 2 dimensions)");
  if (labels->dims.size() != 1) return fail(labels_path + ": expected labels (1 dimension)");
  if (images->items() != labels->items())
    return fail(images_path + " has " + std::to_string(images->items()) + " images but " + labels_path + " has " +
                std::to_string(labels->items()) + " labels");
  Dataset d;
  d.origin = images_path;
  d.rows = limit > 0 ? std::min(limit, images->items()) : images->items();
  d.width = int(images->item_size());
  d.features.resize(d.rows * std::size_t(d.width));
  for (std::size_t i = 0; i < d.features.size(); ++i) d.features[i] = float(images->data[i]) / 255.0f;
  d.labels.resize(d.rows);
  int max_label = 0;
  for (std::size_t i = 0; i < d.rows; ++i) {
    d.labels[i] = labels->data[i];
    max_label = std::max(max_label, d.labels[i]);
  }
  d.classes = max_label + 1;
  return d;
}

}  // namespace

Result<DataSplits> load_idx_dir(const std::string& dir, std::size_t limit_train, std::size_t limit_test) {
  auto train = load_split(dir, "train", limit_train);
  if (!train) return fail(train.error());
  auto test = load_split(dir, "t10k", limit_test);
  if (!test) return fail(test.error());
  DataSplits s{std::move(train).value(), std::move(test).value()};
  if (s.test.width != s.train.width)
    return fail("--data " + dir + ": train images have " + std::to_string(s.train.width) +
                " pixels, test images " + std::to_string(s.test.width));
  s.train.classes = s.test.classes = std::max(s.train.classes, s.test.classes);
  return s;
}

DataSplits synthetic_data(const std::string& model, std::size_t train_rows, std::size_t test_rows,
                          std::uint64_t seed) {
  std::mt19937 gen{std::uint32_t(seed ^ 0x5eedda7aULL)};
  const bool linear = model == "linear";
  const int width = linear ? 20 : 784;
  // The teacher: a fixed random linear map that defines the targets/labels.
  const int outputs = linear ? 1 : 10;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> teacher(std::size_t(outputs) * (width + 1));
  for (float& t : teacher) t = normal(gen);
  auto make = [&](std::size_t rows, const char* name) {
    Dataset d;
    d.origin = std::string("synthetic ") + name;
    d.rows = rows;
    d.width = width;
    d.features.resize(rows * std::size_t(width));
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    for (float& f : d.features) f = linear ? normal(gen) : unit(gen);
    if (linear) {
      d.target_width = 1;
      d.targets.resize(rows);
    } else {
      d.classes = 10;
      d.labels.resize(rows);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      const float* x = &d.features[r * std::size_t(width)];
      int best = 0;
      float best_score = -1e30f;
      for (int o = 0; o < outputs; ++o) {
        const float* w = &teacher[std::size_t(o) * (width + 1)];
        float score = w[width];
        for (int i = 0; i < width; ++i) score += w[i] * (linear ? x[i] : x[i] - 0.5f);
        if (score > best_score) best_score = score, best = o;
      }
      if (linear)
        d.targets[r] = best_score + 0.01f * normal(gen);
      else
        d.labels[r] = best;
    }
    return d;
  };
  DataSplits s;
  s.train = make(train_rows, "train");
  s.test = make(test_rows, "test");
  return s;
}

}  // namespace ddp::train
