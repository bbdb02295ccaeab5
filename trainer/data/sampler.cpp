#include "data/sampler.hpp"

#include <numeric>
#include <random>
#include <utility>

namespace ddp::train {

std::vector<std::size_t> torch_randperm(std::size_t n, std::uint64_t seed) {
  // torch's CPU generator is a 32-bit Mersenne Twister seeded with the low 32
  // bits of the seed; randperm is a forward Fisher-Yates on its raw outputs.
  std::mt19937 gen(static_cast<std::uint32_t>(seed));
  std::vector<std::size_t> r(n);
  std::iota(r.begin(), r.end(), std::size_t{0});
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const std::size_t z = gen() % (n - i);
    std::swap(r[i], r[i + z]);
  }
  return r;
}

std::vector<std::size_t> distributed_indices(const SamplerConfig& c, std::uint64_t epoch) {
  const std::size_t n = c.dataset_size, replicas = c.num_replicas;
  if (n == 0 || replicas == 0) return {};
  // num_samples per rank: ceil(N / R), or with drop_last and a remainder ceil((N - R) / R).
  const std::size_t per_rank =
      (c.drop_last && n % replicas != 0) ? (n - replicas + replicas - 1) / replicas : (n + replicas - 1) / replicas;
  const std::size_t total = per_rank * replicas;

  std::vector<std::size_t> indices;
  if (c.shuffle) {
    indices = torch_randperm(n, c.seed + epoch);
  } else {
    indices.resize(n);
    std::iota(indices.begin(), indices.end(), std::size_t{0});
  }
  if (!c.drop_last) {
    // Pad by repeating the head of the list (the whole list, as often as needed).
    for (std::size_t i = 0; indices.size() < total; ++i) indices.push_back(indices[i % n]);
  } else {
    indices.resize(total);
  }
  std::vector<std::size_t> mine;
  mine.reserve(per_rank);
  for (std::size_t i = c.rank; i < total; i += replicas) mine.push_back(indices[i]);  // strided
  return mine;
}

}  // namespace ddp::train
