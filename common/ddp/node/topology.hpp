// The node's hardware as plan/binding.hpp needs it: GPUs, RDMA NICs, their PCIe
// paths and the cores near each GPU. Effects: hwloc (this machine or an XML
// export of another) and the NVIDIA driver's /proc files. Everything after
// loading is pure planning on the returned values (plan/binding.hpp).
#pragma once

#include <map>
#include <string>

#include "ddp/base/result.hpp"
#include "ddp/plan/binding.hpp"

namespace ddp {

// A topology exported with `lstopo --of xml` (or hwloc_topology_export_xml),
// e.g. from a node we cannot log into; the error message names the file.
// The allowed cores are the export's allowed cpuset.
Result<Topology> load_topology_xml(const std::string& path);

// This machine. Allowed cores are those of our cgroup's cpuset (hwloc reads
// it), which under Slurm's task/cgroup plugin is the step's cores.
// HWLOC_XMLFILE in the environment makes hwloc load that file instead.
Result<Topology> load_topology_system();

// NVIDIA device minor numbers (/dev/nvidiaN, the numbers SLURM_STEP_GPUS
// lists) -> PCI bus ids ("0000:18:00.0"), from <gpus_dir>/<bus id>/information
// and its "Device Minor: N" line. Minors are what Slurm knows and bus ids are
// what hwloc knows; CUDA's own device order differs from both.
// A missing directory gives an empty map (a node without the driver); an
// unreadable or malformed file is an error that names it.
Result<std::map<unsigned, std::string>> gpu_minors_to_bus_ids(const std::string& gpus_dir = "/proc/driver/nvidia/gpus");

}  // namespace ddp
