// DistributedSampler, exactly as torch 1.13 computes it, so ddp-train and a
// PyTorch job see the same samples on the same ranks in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddp::train {

struct SamplerConfig {
  std::size_t dataset_size = 0;
  std::uint32_t num_replicas = 1;
  std::uint32_t rank = 0;
  bool shuffle = true;
  std::uint64_t seed = 0;  // the same on every rank
  bool drop_last = false;
};

// The indices rank `rank` visits in `epoch` (torch: sampler.set_epoch(epoch)).
std::vector<std::size_t> distributed_indices(const SamplerConfig& config, std::uint64_t epoch);

// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) on the CPU.
std::vector<std::size_t> torch_randperm(std::size_t n, std::uint64_t seed);

}  // namespace ddp::train
