// Which CPUs and which NIC each worker of a node should use. Pure planning on
// value types: the hwloc side (node/topology.hpp) turns a machine or an XML export
// into a Topology, and everything here works on that, so the planner is tested
// on GPU nodes' topologies without their hardware.
//
// The aim is the binding NCCL and the PyTorch docs recommend: each worker on the
// cores next to its GPU (host-to-device copies and the CPU side of the data
// loader stay on the GPU's NUMA node), and the NIC with the shortest PCIe path
// to that GPU (GPUDirect RDMA only pays off when the GPU and the HCA share a
// PCIe switch).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp {

// NCCL's path types between a GPU and a NIC, best first (NCCL_NET_GDR_LEVEL
// uses the same names): PIX = through at most one PCIe switch, PXB = through
// several switches but not the host bridge, PHB = through the host bridge,
// NODE = between host bridges of one NUMA node, SYS = across NUMA nodes.
enum class PathType { PIX, PXB, PHB, NODE, SYS };
std::string_view to_string(PathType type);  // "PIX", ...

struct GpuInfo {
  std::string bus_id;  // "0000:18:00.0", lower-case hex, domain included
  // Cores local to the GPU (the cores of its first non-I/O ancestor: the NUMA
  // node or package its PCIe root hangs off); each core is its PU os indices,
  // sorted; cores in order of their lowest PU os index.
  std::vector<std::vector<unsigned>> local_cores;
};

struct NicInfo {
  std::string name;    // the OpenFabrics OS device name, e.g. "mlx5_0"
  std::string bus_id;  // its PCI device; empty when hwloc shows none
};

struct Topology {
  std::vector<GpuInfo> gpus;                         // vendor 0x10de, class 0x0302 or 0x0300; in PCI bus id order
  std::vector<NicInfo> nics;                         // OpenFabrics OS devices, in name order
  std::vector<std::vector<PathType>> gpu_nic_path;   // [gpu index][nic index]
  std::vector<std::vector<unsigned>> allowed_cores;  // allowed cores, each its allowed PU os indices; by lowest PU
};

// "18:00.0", "0000:18:00.0" or nvidia-smi's "00000000:18:00.0", any case ->
// "0000:18:00.0". The same GPU is spelled all three ways by the tools around
// us, so every comparison goes through this.
Result<std::string> normalize_pci_bus_id(std::string_view text);

struct WorkerBinding {
  std::string gpu_bus_id;      // empty: no GPU (CPU mode)
  std::vector<unsigned> cpus;  // PU os indices to pin to, sorted; empty: leave unbound
  std::string nic;             // closest NIC name, empty if none
  std::optional<PathType> nic_path;
};

struct BindingPlan {
  std::vector<WorkerBinding> workers;
  std::vector<std::string> warnings;  // for the log; each names the GPU and the fix
};

// GPU mode: worker i gets gpu_bus_ids[i] (as given). Its cpus are the GPU's
// local cores that are also in `allowed_cores` (the step's cores; empty =
// topology.allowed_cores), shared fairly (split_cores_fairly) among the workers
// whose GPUs have that same core set. When the step may not use any of the
// GPU's local cores, the worker gets its fair share of all allowed cores (as if
// every worker fell back) and a warning. Its NIC is the one with the best path
// to the GPU, the lowest index on a tie. A GPU the topology does not show keeps
// its bus id but gets no cpus and no NIC, and a warning.
BindingPlan plan_gpu_binding(const Topology& topo, const std::vector<std::string>& gpu_bus_ids,
                             const std::vector<std::vector<unsigned>>& allowed_cores);

// CPU mode: `workers` workers share the allowed cores (empty = topology's)
// fairly in os order; no GPU, no NIC.
BindingPlan plan_cpu_binding(const Topology& topo, std::size_t workers,
                             const std::vector<std::vector<unsigned>>& allowed_cores);

// Share C cores among k workers: contiguous chunks of whole cores (hyperthread
// siblings stay together, so two workers never fight over one core's
// execution units), the first C % k workers one core more. With fewer cores
// than workers (C < k), worker j gets core j % C. Returns one PU list per
// worker, sorted; all empty when there are no cores.
std::vector<std::vector<unsigned>> split_cores_fairly(const std::vector<std::vector<unsigned>>& cores,
                                                      std::size_t workers);

}  // namespace ddp
