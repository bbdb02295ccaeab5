#include "process_group/gpu_claims.hpp"

#include <algorithm>

namespace ddp::train {

std::string node_identity(const std::string& hostname, const std::string& boot_id) {
  return boot_id.empty() ? hostname : hostname + "/" + boot_id;
}

std::string nccl_host_identity(const char* nccl_hostid, const std::string& node) {
  if (nccl_hostid && *nccl_hostid) return std::string("NCCL_HOSTID=") + nccl_hostid;
  return node;
}

// Three lines: NCCL host, bus id, CUDA_VISIBLE_DEVICES. None of them holds a
// newline (hostnames, bus ids and device lists cannot).
Bytes encode_gpu_claim(const GpuClaim& claim) {
  const std::string text = claim.nccl_host + "\n" + claim.bus_id + "\n" + claim.visible;
  return Bytes(text.begin(), text.end());
}

Result<GpuClaim> decode_gpu_claim(int local_rank, const Bytes& bytes) {
  const std::string text(bytes.begin(), bytes.end());
  const auto first = text.find('\n');
  const auto second = first == std::string::npos ? std::string::npos : text.find('\n', first + 1);
  if (second == std::string::npos || text.find('\n', second + 1) != std::string::npos)
    return fail("local rank " + std::to_string(local_rank) +
                " published a malformed GPU claim: do all ranks of this node run the same ddp-train?");
  GpuClaim claim;
  claim.local_rank = local_rank;
  claim.nccl_host = text.substr(0, first);
  claim.bus_id = text.substr(first + 1, second - first - 1);
  claim.visible = text.substr(second + 1);
  if (claim.nccl_host.empty() || claim.bus_id.empty())
    return fail("local rank " + std::to_string(local_rank) + " published an empty GPU claim");
  return claim;
}

Status check_gpu_claims(const std::vector<GpuClaim>& claims) {
  std::vector<GpuClaim> sorted = claims;
  std::sort(sorted.begin(), sorted.end(),
            [](const GpuClaim& a, const GpuClaim& b) { return a.local_rank < b.local_rank; });
  for (std::size_t i = 0; i < sorted.size(); ++i)
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      const GpuClaim& a = sorted[i];
      const GpuClaim& b = sorted[j];
      if (a.bus_id != b.bus_id || a.nccl_host != b.nccl_host) continue;
      return fail("local ranks " + std::to_string(a.local_rank) + " and " + std::to_string(b.local_rank) +
                  " of this node both use the GPU at PCI " + a.bus_id + " (CUDA_VISIBLE_DEVICES " + a.visible +
                  " and " + b.visible + "), and NCCL refuses two ranks on one GPU (\"Duplicate GPU detected\"): "
                  "start at most one worker per GPU (ddp-agent --nproc, srun --ddp-gpus or --gpus-per-task=1), "
                  "or give each worker its own GPU through CUDA_VISIBLE_DEVICES; to share a GPU on purpose "
                  "(testing), give each rank its own NCCL_HOSTID");
    }
  return Ok{};
}

}  // namespace ddp::train
