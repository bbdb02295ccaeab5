#include "ddp/plan/binding.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "ddp/base/cpu_list.hpp"
#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

using Cores = std::vector<std::vector<unsigned>>;

// Reads one hexadecimal field of a bus id: 1..max_digits digits.
bool hex_field(std::string_view text, std::size_t max_digits, unsigned& value) {
  if (text.empty() || text.size() > max_digits) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// The PUs of `cores` that are in `allowed` (sorted), cores with none dropped.
Cores intersect(const Cores& cores, const std::vector<unsigned>& allowed) {
  Cores out;
  for (const auto& core : cores) {
    std::vector<unsigned> kept;
    for (unsigned pu : core)
      if (std::binary_search(allowed.begin(), allowed.end(), pu)) kept.push_back(pu);
    if (!kept.empty()) out.push_back(std::move(kept));
  }
  return out;
}

std::vector<unsigned> all_pus(const Cores& cores) {
  std::vector<unsigned> pus;
  for (const auto& core : cores) pus.insert(pus.end(), core.begin(), core.end());
  std::sort(pus.begin(), pus.end());
  pus.erase(std::unique(pus.begin(), pus.end()), pus.end());
  return pus;
}

// The step's cores as the planners use them: each core's PUs sorted, empty
// cores dropped, cores in os order (by lowest PU) whatever order the caller
// gave; empty means the topology's allowed cores.
Cores step_cores(const Topology& topo, const Cores& allowed_cores) {
  Cores cores = allowed_cores.empty() ? topo.allowed_cores : allowed_cores;
  for (auto& core : cores) std::sort(core.begin(), core.end());
  cores.erase(std::remove_if(cores.begin(), cores.end(), [](const auto& core) { return core.empty(); }), cores.end());
  std::sort(cores.begin(), cores.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return cores;
}

const GpuInfo* find_gpu(const Topology& topo, const std::string& bus_id) {
  for (const auto& gpu : topo.gpus)
    if (gpu.bus_id == bus_id) return &gpu;
  return nullptr;
}

// The topology's GPU for a bus id as the step spells it; null when the
// topology does not show it (or the id is no bus id at all).
const GpuInfo* locate_gpu(const Topology& topo, const std::string& gpu_bus_id) {
  const auto bus_id = normalize_pci_bus_id(gpu_bus_id);
  return bus_id ? find_gpu(topo, *bus_id) : nullptr;
}

// The NIC with the best path to topology GPU g into w; the lowest index wins
// a tie. A NIC the topology gives no path to is never chosen.
void choose_nic(const Topology& topo, std::size_t g, WorkerBinding& w) {
  for (std::size_t k = 0; k < topo.nics.size(); ++k) {
    if (g >= topo.gpu_nic_path.size() || k >= topo.gpu_nic_path[g].size()) break;
    const PathType path = topo.gpu_nic_path[g][k];
    if (!w.nic_path || path < *w.nic_path) {  // strict: the lowest index wins a tie
      w.nic = topo.nics[k].name;
      w.nic_path = path;
    }
  }
}

// Workers whose GPUs sit on the same cores share them; each such group is
// split on its own, so two GPUs on package 0 and one on package 1 give the
// lone GPU all of package 1 rather than a third of everything. Workers with no
// local cores (local[i] empty) are left as they are.
void share_local_cores(const std::vector<Cores>& local, std::vector<WorkerBinding>& workers) {
  std::map<Cores, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < local.size(); ++i)
    if (!local[i].empty()) groups[local[i]].push_back(i);
  for (const auto& [cores, members] : groups) {
    const auto shares = split_cores_fairly(cores, members.size());
    for (std::size_t j = 0; j < members.size(); ++j) workers[members[j]].cpus = shares[j];
  }
}

std::string unknown_gpu_warning(const std::string& gpu_bus_id, std::size_t local_rank) {
  return "GPU " + gpu_bus_id + " of local rank " + std::to_string(local_rank) +
         " is not in this node's hwloc topology, so that worker is left unbound (no CPU "
         "pinning, no NIC choice); check that `lstopo-no-graphics --whole-io` lists the GPU "
         "and that the step's GPU list matches /proc/driver/nvidia/gpus";
}

std::string far_cores_warning(const WorkerBinding& w, const GpuInfo& gpu, std::size_t local_rank) {
  return "the step may use none of the cores local to GPU " + w.gpu_bus_id + " (CPUs " +
         cpu_list(all_pus(gpu.local_cores)) + "), so local rank " + std::to_string(local_rank) + " runs on CPUs " +
         (w.cpus.empty() ? std::string("(none: unbound)") : cpu_list(w.cpus)) +
         " away from its GPU, which slows host-device copies; ask Slurm for cores next to the "
         "GPUs (--gres-flags=enforce-binding, with Cores= set in gres.conf)";
}

// No local core allowed for the workers in `far`: the step's cpuset is
// elsewhere (e.g. Slurm gave the job cores on the other socket). Each such
// worker takes the share of the allowed cores it would get if all workers fell
// back, which keeps the fallback workers apart from each other, and a warning.
void place_far_workers(const Cores& allowed, const std::vector<std::size_t>& far,
                       const std::vector<const GpuInfo*>& gpus, BindingPlan& plan) {
  if (far.empty()) return;
  const auto shares = split_cores_fairly(allowed, plan.workers.size());
  for (std::size_t i : far) {
    WorkerBinding& w = plan.workers[i];
    w.cpus = shares[i];
    plan.warnings.push_back(far_cores_warning(w, *gpus[i], i));
  }
}

}  // namespace

std::string_view to_string(PathType type) {
  switch (type) {
    case PathType::PIX:
      return "PIX";
    case PathType::PXB:
      return "PXB";
    case PathType::PHB:
      return "PHB";
    case PathType::NODE:
      return "NODE";
    case PathType::SYS:
      return "SYS";
  }
  return "SYS";  // unreachable; keeps -Wreturn-type quiet
}

Result<std::string> normalize_pci_bus_id(std::string_view text) {
  const auto bad = [&] {
    return fail("'" + std::string(text) +
                "' is not a PCI bus id; write it as DOMAIN:BUS:DEVICE.FUNCTION in hex, e.g. 0000:18:00.0");
  };
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return bad();
  const auto dev_colon = text.rfind(':', dot);
  if (dev_colon == std::string_view::npos) return bad();
  const auto bus_colon = dev_colon == 0 ? std::string_view::npos : text.rfind(':', dev_colon - 1);
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  const auto bus_begin = bus_colon == std::string_view::npos ? 0 : bus_colon + 1;
  if (bus_colon != std::string_view::npos && !hex_field(text.substr(0, bus_colon), 8, domain)) return bad();
  if (!hex_field(text.substr(bus_begin, dev_colon - bus_begin), 2, bus) ||
      !hex_field(text.substr(dev_colon + 1, dot - dev_colon - 1), 2, dev) ||
      !hex_field(text.substr(dot + 1), 1, func) || dev > 0x1f || func > 7)
    return bad();
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, dev, func);
  return std::string(out);
}

std::vector<std::vector<unsigned>> split_cores_fairly(const Cores& cores, std::size_t workers) {
  std::vector<std::vector<unsigned>> out(workers);
  const std::size_t c = cores.size();
  if (c == 0) return out;
  if (c < workers) {
    // Oversubscribed: round robin, so the sharing is as even as it can be.
    for (std::size_t j = 0; j < workers; ++j) out[j] = all_pus({cores[j % c]});
    return out;
  }
  std::size_t next = 0;
  for (std::size_t j = 0; j < workers; ++j) {
    const std::size_t size = c / workers + (j < c % workers ? 1 : 0);
    out[j] = all_pus(Cores(cores.begin() + std::ptrdiff_t(next), cores.begin() + std::ptrdiff_t(next + size)));
    next += size;
  }
  return out;
}

BindingPlan plan_gpu_binding(const Topology& topo, const std::vector<std::string>& gpu_bus_ids,
                             const std::vector<std::vector<unsigned>>& allowed_cores) {
  const Cores allowed = step_cores(topo, allowed_cores);
  const auto allowed_pus = all_pus(allowed);
  const std::size_t n = gpu_bus_ids.size();

  BindingPlan plan;
  plan.workers.resize(n);
  std::vector<const GpuInfo*> gpus(n, nullptr);  // per worker: its GPU in the topology
  std::vector<Cores> local(n);                   // per worker: its GPU's local cores the step may use
  std::vector<std::size_t> far;                  // workers whose GPU has no local core the step may use
  for (std::size_t i = 0; i < n; ++i) {
    WorkerBinding& w = plan.workers[i];
    w.gpu_bus_id = gpu_bus_ids[i];
    gpus[i] = locate_gpu(topo, w.gpu_bus_id);
    if (!gpus[i]) {
      plan.warnings.push_back(unknown_gpu_warning(w.gpu_bus_id, i));
      continue;
    }
    choose_nic(topo, std::size_t(gpus[i] - topo.gpus.data()), w);
    local[i] = intersect(gpus[i]->local_cores, allowed_pus);
    if (local[i].empty()) far.push_back(i);
  }
  share_local_cores(local, plan.workers);
  place_far_workers(allowed, far, gpus, plan);
  return plan;
}

BindingPlan plan_cpu_binding(const Topology& topo, std::size_t workers,
                             const std::vector<std::vector<unsigned>>& allowed_cores) {
  const Cores allowed = step_cores(topo, allowed_cores);
  BindingPlan plan;
  const auto shares = split_cores_fairly(allowed, workers);
  plan.workers.resize(workers);
  for (std::size_t i = 0; i < workers; ++i) plan.workers[i].cpus = shares[i];
  return plan;
}

}  // namespace ddp
