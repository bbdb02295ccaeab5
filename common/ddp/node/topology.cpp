#include "ddp/node/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

namespace fs = std::filesystem;

// hwloc is C: owners that cannot leak on an early `return fail(...)`.
struct TopologyDeleter {
  void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string os_error() { return std::strerror(errno); }

// Loads this machine (xml_path empty) or an XML export. `what` names the
// source in messages.
Result<TopologyPtr> load(const std::string& xml_path, const std::string& what) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return fail("cannot start hwloc for " + what + ": " + os_error());
  TopologyPtr topo(raw);
  if (!xml_path.empty() && hwloc_topology_set_xml(raw, xml_path.c_str()) != 0)
    return fail("cannot use " + what + " as an hwloc topology: " + os_error() +
                "; is it an hwloc XML export (lstopo --of xml)?");
  // hwloc drops every I/O object (PCI devices, bridges, OS devices) unless
  // told otherwise, and the filter must be set BEFORE hwloc_topology_load:
  // set later it changes nothing and hwloc silently reports zero PCI devices,
  // i.e. a GPU node that looks like it has no GPUs. KEEP_IMPORTANT keeps GPUs,
  // NICs and their OS devices, and every bridge above a kept device (bridges
  // are only dropped when nothing below them is kept), so the PCIe paths we
  // count below are complete.
  if (hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
    return fail("cannot enable hwloc's I/O discovery for " + what + ": " + os_error());
  if (hwloc_topology_load(raw) != 0)
    return fail("cannot load " + what + " with hwloc: " + os_error() +
                (xml_path.empty() ? std::string("") : "; is it an hwloc XML export (lstopo --of xml)?"));
  return topo;
}

// The PUs of `set` grouped by core; a PU without a Core object above it
// counts as its own core. Each core sorted, cores by their lowest PU: Core os
// indices are useless as an order (they restart in each package on x86 and
// are sparse on POWER).
std::vector<std::vector<unsigned>> cores_in(hwloc_topology_t t, hwloc_const_cpuset_t set) {
  std::vector<std::pair<hwloc_obj_t, std::vector<unsigned>>> by_core;
  for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, nullptr); pu;
       pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu)) {
    if (!set || !hwloc_bitmap_isset(set, pu->os_index)) continue;
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_CORE, pu);
    if (!core) core = pu;
    auto it = std::find_if(by_core.begin(), by_core.end(), [&](const auto& c) { return c.first == core; });
    if (it == by_core.end()) it = by_core.insert(by_core.end(), {core, {}});
    it->second.push_back(pu->os_index);
  }
  std::vector<std::vector<unsigned>> cores;
  for (auto& [core, pus] : by_core) {
    std::sort(pus.begin(), pus.end());
    cores.push_back(std::move(pus));
  }
  std::sort(cores.begin(), cores.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return cores;
}

std::string bus_id_of(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", unsigned(a.domain), unsigned(a.bus), unsigned(a.dev),
                unsigned(a.func));
  return out;
}

// The PCI device an OS device belongs to, or the OS device itself when hwloc
// shows none (then its parent, whatever it is, gives its locality).
hwloc_obj_t pci_or_self(hwloc_obj_t osdev) {
  for (hwloc_obj_t o = osdev->parent; o; o = o->parent) {
    if (o->type == HWLOC_OBJ_PCI_DEVICE) return o;
    if (o->type != HWLOC_OBJ_OS_DEVICE) break;
  }
  return osdev;
}

// Bridges strictly between `dev` and its ancestor `top`.
int bridges_between(hwloc_obj_t dev, hwloc_obj_t top) {
  int n = 0;
  for (hwloc_obj_t o = dev->parent; o && o != top; o = o->parent)
    if (o->type == HWLOC_OBJ_BRIDGE) ++n;
  return n;
}

PathType path_type(hwloc_topology_t t, hwloc_obj_t a, hwloc_obj_t b) {
  // Not hwloc_get_common_ancestor_obj(): it walks by depth, I/O objects have
  // negative virtual depths, and for two devices at different PCIe depths it
  // climbs past the root. Walking the parent chains is always right.
  std::vector<hwloc_obj_t> above_a;
  for (hwloc_obj_t o = a; o; o = o->parent) above_a.push_back(o);
  hwloc_obj_t ca = b;
  while (ca && std::find(above_a.begin(), above_a.end(), ca) == above_a.end()) ca = ca->parent;
  if (!ca) return PathType::SYS;  // not one tree; cannot happen in a loaded topology

  if (ca->type == HWLOC_OBJ_BRIDGE) {
    if (ca->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) return PathType::PHB;
    // A PCIe switch is an upstream port (ca) plus one downstream port per
    // device: one bridge on each side is one switch, more are nested switches.
    return bridges_between(a, ca) <= 1 && bridges_between(b, ca) <= 1 ? PathType::PIX : PathType::PXB;
  }
  if (ca->type == HWLOC_OBJ_PCI_DEVICE || ca->type == HWLOC_OBJ_OS_DEVICE) return PathType::PIX;  // same device
  // Different host bridges: one NUMA node, or across the inter-socket link.
  hwloc_obj_t na = hwloc_get_non_io_ancestor_obj(t, a);
  hwloc_obj_t nb = hwloc_get_non_io_ancestor_obj(t, b);
  if (na && nb && na->nodeset && nb->nodeset && hwloc_bitmap_isequal(na->nodeset, nb->nodeset) &&
      hwloc_bitmap_weight(na->nodeset) == 1)
    return PathType::NODE;
  return PathType::SYS;
}

// "mlx5_2" before "mlx5_10": digit runs compare as numbers, the order
// ibv_devices and NCCL_IB_HCA lists read naturally.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const auto da = a.substr(i, ei - i), db = b.substr(j, ej - j);
      const auto ta = da.substr(std::min(da.find_first_not_of('0'), da.size()));
      const auto tb = db.substr(std::min(db.find_first_not_of('0'), db.size()));
      if (ta.size() != tb.size()) return ta.size() < tb.size();
      if (ta != tb) return ta < tb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // "mlx5_01" vs "mlx5_1": any fixed order
}

Topology describe(hwloc_topology_t t) {
  Topology topo;
  topo.allowed_cores = cores_in(t, hwloc_topology_get_allowed_cpuset(t));

  // GPUs are keyed by PCI bus id, never by the cudaN/nvmlN OS devices some
  // exports carry: those are the indices the exporting process saw (after its
  // CUDA_VISIBLE_DEVICES, in CUDA's order), and Debian's hwloc, without the
  // CUDA and NVML plugins, shows none at all on a live node.
  std::vector<hwloc_obj_t> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(t, nullptr); pci; pci = hwloc_get_next_pcidev(t, pci)) {
    const auto& a = pci->attr->pcidev;
    if (a.vendor_id == 0x10de && (a.class_id == 0x0302 || a.class_id == 0x0300)) gpus.push_back(pci);
  }
  const auto pci_key = [](hwloc_obj_t o) {
    const auto& a = o->attr->pcidev;
    return std::make_tuple(unsigned(a.domain), unsigned(a.bus), unsigned(a.dev), unsigned(a.func));
  };
  std::sort(gpus.begin(), gpus.end(), [&](hwloc_obj_t x, hwloc_obj_t y) { return pci_key(x) < pci_key(y); });

  std::vector<std::pair<NicInfo, hwloc_obj_t>> nics;
  for (hwloc_obj_t os = hwloc_get_next_osdev(t, nullptr); os; os = hwloc_get_next_osdev(t, os)) {
    if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !os->name) continue;
    hwloc_obj_t where = pci_or_self(os);
    nics.push_back({NicInfo{os->name, where->type == HWLOC_OBJ_PCI_DEVICE ? bus_id_of(where) : ""}, where});
  }
  std::sort(nics.begin(), nics.end(),
            [](const auto& x, const auto& y) { return natural_less(x.first.name, y.first.name); });

  for (hwloc_obj_t gpu : gpus) {
    hwloc_obj_t home = hwloc_get_non_io_ancestor_obj(t, gpu);
    topo.gpus.push_back(
        GpuInfo{bus_id_of(gpu), home ? cores_in(t, home->cpuset) : std::vector<std::vector<unsigned>>{}});
    auto& paths = topo.gpu_nic_path.emplace_back();
    for (const auto& nic : nics) paths.push_back(path_type(t, gpu, nic.second));
  }
  for (auto& nic : nics) topo.nics.push_back(std::move(nic.first));
  return topo;
}

// No exception may leave these functions (they run inside slurmstepd's
// plugin and the agent): the only ones left here are allocation failures.
template <class F>
auto guarded(const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return fail(what + ": " + e.what());
  }
}

}  // namespace

Result<Topology> load_topology_xml(const std::string& path) {
  return guarded("cannot read the topology " + path, [&]() -> Result<Topology> {
    // hwloc's own message for a missing file is a bare errno; check first so
    // the message says what to do.
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      return fail("the topology file " + path + " does not exist or is not a file; export one with " +
                  "`lstopo-no-graphics --of xml FILE` on the node");
    auto topo = load(path, "the topology file " + path);
    if (!topo) return fail(topo.error());
    return describe(topo->get());
  });
}

Result<Topology> load_topology_system() {
  return guarded("cannot read this machine's topology", []() -> Result<Topology> {
    auto topo = load("", "this machine's topology");
    if (!topo) return fail(topo.error());
    return describe(topo->get());
  });
}

Result<std::map<unsigned, std::string>> gpu_minors_to_bus_ids(const std::string& gpus_dir) {
  using Map = std::map<unsigned, std::string>;
  return guarded("cannot read " + gpus_dir, [&]() -> Result<Map> {
    Map minors;
    std::error_code ec;
    const fs::file_status status = fs::status(gpus_dir, ec);
    if (status.type() == fs::file_type::not_found) return minors;  // no NVIDIA driver: no GPUs to map
    if (ec) return fail("cannot read " + gpus_dir + ": " + ec.message());
    if (status.type() != fs::file_type::directory)
      return fail(gpus_dir + " is not a directory; it should be the NVIDIA driver's list of GPUs");

    fs::directory_iterator it(gpus_dir, ec);
    if (ec) return fail("cannot list " + gpus_dir + ": " + ec.message());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) return fail("cannot list " + gpus_dir + ": " + ec.message());
      const std::string dir = it->path().string();
      const std::string file = dir + "/information";
      const auto bus_id = normalize_pci_bus_id(it->path().filename().string());
      if (!bus_id)
        return fail(dir + " is not named after a PCI bus id (" + bus_id.error() + "); is " + gpus_dir +
                    " the NVIDIA driver's GPU list?");

      std::ifstream in(file);
      if (!in) return fail("cannot read " + file + ": " + os_error());
      std::string line;
      std::optional<unsigned> minor;
      while (std::getline(in, line)) {
        constexpr std::string_view key = "Device Minor:";
        if (line.compare(0, key.size(), key) != 0) continue;
        // The driver pads the value with tabs and spaces. Minor 255 is
        // /dev/nvidiactl, never a GPU.
        const auto value = parse_uint(trim(std::string_view(line).substr(key.size())), 0, 254, "Device Minor");
        if (!value)
          return fail(file + ": '" + line + "' does not give a device minor number between 0 and 254; " +
                      "is this an NVIDIA driver information file?");
        minor = unsigned(*value);
        break;
      }
      if (in.bad()) return fail("cannot read " + file + ": " + os_error());
      if (!minor) return fail(file + " has no 'Device Minor:' line; is this an NVIDIA driver information file?");
      const auto [where, inserted] = minors.emplace(*minor, *bus_id);
      if (!inserted)
        return fail(file + " gives device minor " + std::to_string(*minor) + ", which GPU " + where->second +
                    " already has; the driver's GPU list is inconsistent");
    }
    return minors;
  });
}

}  // namespace ddp
