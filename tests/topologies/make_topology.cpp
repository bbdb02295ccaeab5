// Writes the hwloc XML of the GPU node shapes the binding tests plan on.
//
//   make_topology OUTPUT_DIR    writes OUTPUT_DIR/<shape>.xml for every shape
//
// hwloc's synthetic topologies have no PCI devices, so each shape is written
// here: a short description per node (the *_node() functions below), turned
// into hwloc XML, loaded with hwloc (which checks it), given its NVLink
// matrix where the node has one, and written out with hwloc's own exporter,
// as `lstopo --of xml` would on such a node. tests/topologies/README.md says
// what each shape is and what the tests expect of it.
#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// ---- What a node is made of ----

struct OsDevice {
  std::string name;  // "mlx5_0", "ib0", "nvml0"
  hwloc_obj_osdev_type_e type;
  std::string subtype;  // "NVML" for a GPU's; empty if none
};

// One node of a PCI tree: a host bridge (no bus id), a PCI-to-PCI bridge
// (a root port or a PCIe switch port, class 0604) or a device.
struct PciNode {
  std::string bus_id;  // "0000:18:00.0"
  bool bridge = false;
  unsigned class_id = 0, vendor = 0, device = 0;
  std::vector<OsDevice> os_devices;
  std::vector<PciNode> below;
  // Its bus number lies outside the bus ranges of the bridges above it, as
  // some firmware numbers devices: the ranges written leave it out.
  bool bus_outside_bridge = false;
};

using Cores = std::vector<std::vector<unsigned>>;  // the PUs (os indices) of each core

struct Package {
  unsigned numa_node;
  Cores cores;
  std::vector<PciNode> io;  // host bridges
};

// An NVLink connection: two GPUs (bus ids), or a GPU and "package N".
struct NvLink {
  std::string end_a, end_b;
  unsigned links;
};

struct Shape {
  std::string name;
  std::vector<Package> packages;
  std::vector<unsigned> allowed_pus;  // the PUs a job may use (its cgroup); empty: all
  std::vector<NvLink> nvlinks;
};

// ---- Building blocks of the descriptions ----

std::string bus(unsigned number, unsigned device = 0, unsigned domain = 0) {
  char out[16];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.0", domain, number, device);
  return out;
}

PciNode host_bridge(std::vector<PciNode> below) { return {"", true, 0x0600, 0, 0, {}, std::move(below), false}; }

// A root port or a PCIe switch port (PLX/Broadcom PEX, as in most GPU servers).
PciNode port(std::string bus_id, std::vector<PciNode> below) {
  return {std::move(bus_id), true, 0x0604, 0x10b5, 0x8796, {}, std::move(below), false};
}

// One PCIe switch, its upstream port on bus `up`, downstream ports on bus up+1.
PciNode pcie_switch(unsigned up, std::vector<PciNode> devices) {
  std::vector<PciNode> ports;
  for (unsigned i = 0; i < devices.size(); ++i) ports.push_back(port(bus(up + 1, i), {std::move(devices[i])}));
  return port(bus(up), std::move(ports));
}

PciNode device(std::string bus_id, unsigned class_id, unsigned vendor, unsigned device_id,
               std::vector<OsDevice> os_devices = {}) {
  return {std::move(bus_id), false, class_id, vendor, device_id, std::move(os_devices), {}, false};
}

// A compute GPU (class 0302, "3D controller"); `nvml` names its NVML OS
// device where the exporting hwloc had the NVML plugin (Debian's has not).
PciNode nvidia_gpu(std::string bus_id, unsigned device_id, std::string nvml = "") {
  std::vector<OsDevice> os;
  if (!nvml.empty()) os.push_back({std::move(nvml), HWLOC_OBJ_OSDEV_GPU, "NVML"});
  return device(std::move(bus_id), 0x0302, 0x10de, device_id, std::move(os));
}

// A Mellanox/NVIDIA InfiniBand HCA (class 0207): its verbs device and its IPoIB interface.
PciNode mlx5_hca(std::string bus_id, unsigned device_id, std::string verbs, std::string netdev) {
  return device(
      std::move(bus_id), 0x0207, 0x15b3, device_id,
      {{std::move(netdev), HWLOC_OBJ_OSDEV_NETWORK, ""}, {std::move(verbs), HWLOC_OBJ_OSDEV_OPENFABRICS, ""}});
}

PciNode ethernet(std::string bus_id, std::string netdev) {
  return device(std::move(bus_id), 0x0200, 0x8086, 0x10fb, {{std::move(netdev), HWLOC_OBJ_OSDEV_NETWORK, ""}});
}

// Cores of one PU each, numbered on from `first`.
Cores single_thread_cores(unsigned first, unsigned count) {
  Cores cores;
  for (unsigned i = 0; i < count; ++i) cores.push_back({first + i});
  return cores;
}

// x86 cores with two hyperthreads: core i has PUs first+i and first+i+sibling_offset.
Cores hyperthreaded_cores(unsigned first, unsigned count, unsigned sibling_offset) {
  Cores cores;
  for (unsigned i = 0; i < count; ++i) cores.push_back({first + i, first + i + sibling_offset});
  return cores;
}

// POWER8 cores in SMT2 mode (ppc64_cpu --smt=2): core c has PUs 8c and 8c+1.
Cores smt2_power_cores(unsigned first_core, unsigned count) {
  Cores cores;
  for (unsigned c = first_core; c < first_core + count; ++c) cores.push_back({8 * c, 8 * c + 1});
  return cores;
}

std::vector<unsigned> pus_of(const std::vector<std::vector<unsigned>>& groups) {
  std::vector<unsigned> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

// ---- The shapes ----

// 2 packages of 4 single-thread cores, 4 H100 SXM5 and 2 ConnectX-7.
// Package 0: root port 15:01.0 leads to a PCIe switch (upstream port 16:00.0)
// with GPUs 18:00.0, 19:00.0 and mlx5_0 (1a:00.0) on its downstream ports;
// GPU 2c:00.0 sits under a host bridge of its own. Package 1: the same
// switch with GPU 98:00.0 and mlx5_1 (9a:00.0).
Shape h100_node() {
  const auto h100 = [](unsigned b, const char* nvml) { return nvidia_gpu(bus(b), 0x2330, nvml); };
  const auto cx7 = [](unsigned b, const char* verbs, const char* netdev) {
    return mlx5_hca(bus(b), 0x1021, verbs, netdev);
  };
  PciNode switch0 = pcie_switch(0x16, {h100(0x18, "nvml0"), h100(0x19, "nvml1"), cx7(0x1a, "mlx5_0", "ib0")});
  PciNode switch1 = pcie_switch(0x96, {h100(0x98, "nvml3"), cx7(0x9a, "mlx5_1", "ib1")});
  Package p0{0,
             single_thread_cores(0, 4),
             {host_bridge({port(bus(0x15, 1), {std::move(switch0)})}),
              host_bridge({port(bus(0x2b, 1), {h100(0x2c, "nvml2")})})}};
  Package p1{1, single_thread_cores(4, 4), {host_bridge({port(bus(0x95, 1), {std::move(switch1)})})}};
  return {"2s-4xH100-2xmlx5", {p0, p1}, {}, {}};
}

// 2 packages of 8 hyperthreaded cores (PU siblings 16 apart), 3 Tesla M2075
// and one ConnectX-4. Package 0: GPU 03:00.0 on root port 00:03.0, a Matrox
// VGA (not NVIDIA) behind 00:1e.0. Package 1: an Ethernet NIC on 80:01.0,
// GPU 83:00.0 on root port 80:02.0, and on root port 80:03.0 (bus 84) GPU
// 84:00.0 with a second function, an AMD VGA at 84:00.1 (not a GPU), and
// mlx5_0, whose firmware-given bus id 04:00.0 points at package 0's host
// bridge (buses 00-05): only the tree says where it is.
Shape m2075_node() {
  const auto m2075 = [](unsigned b) { return nvidia_gpu(bus(b), 0x1094); };
  const PciNode matrox_vga = device(bus(0x05, 3), 0x0300, 0x102b, 0x0532);
  const PciNode amd_vga_function = device("0000:84:00.1", 0x0300, 0x1002, 0x6798);
  PciNode hca = mlx5_hca(bus(0x04), 0x1013, "mlx5_0", "ib0");
  hca.bus_outside_bridge = true;
  Package p0{0,
             hyperthreaded_cores(0, 8, 16),
             {host_bridge({port(bus(0x00, 3), {m2075(0x03)}), port(bus(0x00, 0x1e), {matrox_vga})})}};
  Package p1{1,
             hyperthreaded_cores(8, 8, 16),
             {host_bridge({port(bus(0x80, 1), {ethernet(bus(0x81), "eth0")}), port(bus(0x80, 2), {m2075(0x83)}),
                           port(bus(0x80, 3), {m2075(0x84), amd_vga_function, std::move(hca)})})}};
  return {"2s-16c-3xM2075-mlx5", {p0, p1}, {}, {}};
}

// NVIDIA DGX-2H: 2 packages of 24 hyperthreaded cores (siblings 48 apart),
// 16 V100 SXM3, two V100 per second-level PCIe switch, two of those per
// first-level switch on a root port; 12 NVSwitches (class 0680, not GPUs)
// behind switches of their own; no InfiniBand. Seen from a job whose cgroup
// allows PUs 0, 1, 24 and 25 only: two cores of each package.
Shape dgx2_node() {
  const auto v100 = [](unsigned b) { return nvidia_gpu(bus(b), 0x1db8); };
  const auto pair = [&](unsigned a, unsigned b) { return pcie_switch(a - 2, {v100(a), v100(b)}); };
  const auto nvswitches = [](unsigned up) {
    std::vector<PciNode> six;
    for (unsigned i = 0; i < 6; ++i) six.push_back(device(bus(up + 2 + i), 0x0680, 0x10de, 0x1ac1));
    return pcie_switch(up, std::move(six));
  };
  // A root port on bus `root` with a first-level switch below it.
  const auto root_port = [](unsigned root, std::vector<PciNode> below) {
    return port(bus(root), {pcie_switch(root + 1, std::move(below))});
  };
  Package p0{0,
             hyperthreaded_cores(0, 24, 48),
             {host_bridge({root_port(0x2f, {pair(0x34, 0x36), pair(0x39, 0x3b)})}),
              host_bridge({root_port(0x52, {pair(0x57, 0x59), pair(0x5c, 0x5e), nvswitches(0x5f)})})}};
  Package p1{1,
             hyperthreaded_cores(24, 24, 48),
             {host_bridge({root_port(0xb2, {pair(0xb7, 0xb9), pair(0xbc, 0xbe)})}),
              host_bridge({root_port(0xdb, {pair(0xe0, 0xe2), pair(0xe5, 0xe7), nvswitches(0xe8)})})}};
  return {"dgx2-16xV100-nvswitch", {p0, p1}, {0, 1, 24, 25}, {}};
}

// IBM Power S822LC for HPC (8335-GTB): 2 POWER8 packages of 10 cores in SMT2
// mode, 4 P100 SXM2, each under a host bridge (PHB) of its own in PCI
// domains 0002, 0003 (package 0) and 000a, 000b (package 1); NVLink 1.0: two
// links between the GPUs of a pair and two from each GPU to its package.
// Seen from a job whose cgroup allows cores 0-3 and 10-13.
Shape power8_node() {
  const auto p100 = [](unsigned domain, const char* nvml) {
    return host_bridge({port(bus(0, 0, domain), {nvidia_gpu(bus(1, 0, domain), 0x15f9, nvml)})});
  };
  Package p0{0, smt2_power_cores(0, 10), {p100(0x2, "nvml0"), p100(0x3, "nvml1")}};
  Package p1{8, smt2_power_cores(10, 10), {p100(0xa, "nvml2"), p100(0xb, "nvml3")}};
  const std::vector<unsigned> allowed = pus_of({pus_of(smt2_power_cores(0, 4)), pus_of(smt2_power_cores(10, 4))});
  const std::string g0 = bus(1, 0, 0x2), g1 = bus(1, 0, 0x3), g2 = bus(1, 0, 0xa), g3 = bus(1, 0, 0xb);
  const std::vector<NvLink> nvlinks{{g0, g1, 2},          {g2, g3, 2},          {g0, "package 0", 2},
                                    {g1, "package 0", 2}, {g2, "package 1", 2}, {g3, "package 1", 2}};
  return {"power8-4xP100-nvlink", {p0, p1}, allowed, nvlinks};
}

// ---- hwloc XML ----

struct TopologyDeleter {
  void operator()(hwloc_topology_t t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// A set of indices as hwloc writes it ("0x000000ff", "0x00000003,0x03030000").
std::string bitmap(const std::vector<unsigned>& bits) {
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> set(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  if (!set) throw std::bad_alloc();
  for (unsigned b : bits) hwloc_bitmap_set(set.get(), b);
  char* text = nullptr;
  if (hwloc_bitmap_asprintf(&text, set.get()) < 0 || !text) throw std::bad_alloc();
  std::string out(text);
  std::free(text);
  return out;
}

std::string sets(const std::vector<unsigned>& pus, const std::vector<unsigned>& numa_nodes) {
  const std::string cpus = bitmap(pus), nodes = bitmap(numa_nodes);
  return "cpuset=\"" + cpus + "\" complete_cpuset=\"" + cpus + "\" nodeset=\"" + nodes + "\" complete_nodeset=\"" +
         nodes + "\"";
}

// hwloc's <object> elements, indented, each with the next gp_index.
class XmlWriter {
 public:
  std::string text;

  void open(const std::string& type, const std::string& attributes) { line(element(type, attributes) + ">"), ++depth_; }
  void leaf(const std::string& type, const std::string& attributes) { line(element(type, attributes) + "/>"); }
  void close() { --depth_, line("</object>"); }
  void line(const std::string& s) { text += std::string(2 * depth_, ' ') + s + "\n"; }

 private:
  std::string element(const std::string& type, const std::string& attributes) {
    return "<object type=\"" + type + "\" " + attributes + " gp_index=\"" + std::to_string(next_gp_index_++) + "\"";
  }
  unsigned depth_ = 0;
  unsigned next_gp_index_ = 1;
};

unsigned bus_number(const std::string& bus_id) { return unsigned(std::stoul(bus_id.substr(5, 2), nullptr, 16)); }

unsigned highest_bus(const PciNode& node) {
  unsigned highest = node.bus_id.empty() ? 0 : bus_number(node.bus_id);
  for (const auto& child : node.below)
    if (!child.bus_outside_bridge) highest = std::max(highest, highest_bus(child));
  return highest;
}

// A bridge's buses: from the one its children sit on to the highest below it.
std::string bus_range(const PciNode& bridge) {
  if (bridge.below.empty()) throw std::runtime_error("a bridge with nothing below it");
  unsigned lowest = 0xff;
  for (const auto& child : bridge.below)
    if (!child.bus_outside_bridge) lowest = std::min(lowest, bus_number(child.bus_id));
  char out[32];
  std::snprintf(out, sizeof out, "%s:[%02x-%02x]", bridge.below.front().bus_id.substr(0, 4).c_str(), lowest,
                highest_bus(bridge));
  return out;
}

std::string pci_attributes(const PciNode& node) {
  char type[64];
  std::snprintf(type, sizeof type, "%04x [%04x:%04x] [%04x:0000] 00", node.class_id, node.vendor, node.device,
                node.vendor);
  return "pci_busid=\"" + node.bus_id + "\" pci_type=\"" + type + "\" pci_link_speed=\"0\"";
}

void write_pci(XmlWriter& xml, const PciNode& node, unsigned depth) {
  if (node.bus_id.empty()) {
    xml.open("Bridge", "bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"" + bus_range(node) + "\"");
  } else if (node.bridge) {
    xml.open("Bridge", "bridge_type=\"1-1\" depth=\"" + std::to_string(depth) + "\" bridge_pci=\"" + bus_range(node) +
                           "\" " + pci_attributes(node));
  } else if (node.os_devices.empty()) {
    return xml.leaf("PCIDev", pci_attributes(node));
  } else {
    xml.open("PCIDev", pci_attributes(node));
  }
  for (const auto& os : node.os_devices)
    xml.leaf("OSDev", "name=\"" + os.name + "\"" + (os.subtype.empty() ? "" : " subtype=\"" + os.subtype + "\"") +
                          " osdev_type=\"" + std::to_string(int(os.type)) + "\"");
  for (const auto& child : node.below) write_pci(xml, child, depth + 1);
  xml.close();
}

void write_package(XmlWriter& xml, const Package& package, unsigned index) {
  const auto pus = pus_of(package.cores);
  const std::vector<unsigned> node{package.numa_node};
  xml.open("Package", "os_index=\"" + std::to_string(index) + "\" " + sets(pus, node));
  xml.leaf("NUMANode", "os_index=\"" + std::to_string(package.numa_node) + "\" " + sets(pus, node));
  // Core numbers restart in each package, as Linux numbers them on x86.
  for (unsigned c = 0; c < package.cores.size(); ++c) {
    xml.open("Core", "os_index=\"" + std::to_string(c) + "\" " + sets(package.cores[c], node));
    for (unsigned pu : package.cores[c]) xml.leaf("PU", "os_index=\"" + std::to_string(pu) + "\" " + sets({pu}, node));
    xml.close();
  }
  for (const auto& host_bridge : package.io) write_pci(xml, host_bridge, 0);
  xml.close();
}

std::string machine_xml(const Shape& shape) {
  std::vector<unsigned> pus, nodes;
  for (const auto& p : shape.packages) {
    const auto mine = pus_of(p.cores);
    pus.insert(pus.end(), mine.begin(), mine.end());
    nodes.push_back(p.numa_node);
  }
  XmlWriter xml;
  xml.line("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
  xml.line("<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">");
  xml.line("<topology version=\"2.0\">");
  xml.open("Machine", "os_index=\"0\" " + sets(pus, nodes) + " allowed_cpuset=\"" +
                          bitmap(shape.allowed_pus.empty() ? pus : shape.allowed_pus) + "\" allowed_nodeset=\"" +
                          bitmap(nodes) + "\"");
  xml.line("<info name=\"DDPTestShape\" value=\"" + shape.name + " (tests/topologies/make_topology.cpp)\"/>");
  for (unsigned i = 0; i < shape.packages.size(); ++i) write_package(xml, shape.packages[i], i);
  xml.close();
  xml.line("</topology>");
  return xml.text;
}

// ---- Through hwloc ----

// An NVLink end: a GPU's first OS device (hwloc's NVML backend puts its
// matrix on those), or a package.
hwloc_obj_t nvlink_end(hwloc_topology_t topo, const std::string& end) {
  hwloc_obj_t obj = nullptr;
  unsigned domain = 0, bus_no = 0, dev = 0, fn = 0, package = 0;
  if (std::sscanf(end.c_str(), "package %u", &package) == 1) {
    obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, package);
  } else if (std::sscanf(end.c_str(), "%x:%x:%x.%x", &domain, &bus_no, &dev, &fn) == 4) {
    hwloc_obj_t gpu = hwloc_get_pcidev_by_busid(topo, domain, bus_no, dev, fn);
    obj = gpu ? gpu->io_first_child : nullptr;
  }
  if (!obj) throw std::runtime_error("no NVLink end '" + end + "' (a GPU needs an OS device)");
  return obj;
}

// Bandwidth in MB/s, as hwloc's NVML backend gives it: 20 GB/s a link and direction (NVLink 1.0).
void add_nvlink_matrix(hwloc_topology_t topo, const std::vector<NvLink>& links) {
  if (links.empty()) return;
  std::vector<hwloc_obj_t> ends;
  const auto index = [&](const std::string& end) {
    hwloc_obj_t obj = nvlink_end(topo, end);
    for (unsigned i = 0; i < ends.size(); ++i)
      if (ends[i] == obj) return i;
    ends.push_back(obj);
    return unsigned(ends.size() - 1);
  };
  std::vector<std::pair<unsigned, unsigned>> pairs;
  for (const auto& link : links) {
    const unsigned a = index(link.end_a);  // in this order: the matrix lists the ends as they come
    pairs.emplace_back(a, index(link.end_b));
  }
  const std::size_t n = ends.size();
  std::vector<hwloc_uint64_t> values(n * n, 0);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto [a, b] = pairs[i];
    values[a * n + b] = values[b * n + a] = hwloc_uint64_t(links[i].links) * 20000;
  }
  auto handle = hwloc_distances_add_create(topo, "NVLinkBandwidth",
                                           HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH, 0);
  if (!handle || hwloc_distances_add_values(topo, handle, unsigned(n), ends.data(), values.data(), 0) != 0 ||
      hwloc_distances_add_commit(topo, handle, 0) != 0)
    throw std::runtime_error("hwloc refuses the NVLink matrix");
}

unsigned pci_devices(const PciNode& node) {
  unsigned n = node.bus_id.empty() || node.bridge ? 0 : 1;
  for (const auto& child : node.below) n += pci_devices(child);
  return n;
}

// Loads the shape's XML with every I/O object kept and the cgroup's
// disallowed PUs too (a loader restricts to the allowed ones itself), checks
// that hwloc sees every PCI device, and writes hwloc's export of it.
void write_topology(const Shape& shape, const std::string& path) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("cannot start hwloc");
  TopologyPtr topo(raw);
  const std::string xml = machine_xml(shape);
  if (hwloc_topology_set_xmlbuffer(raw, xml.c_str(), int(xml.size()) + 1) != 0 ||
      hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL) != 0 ||
      hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0 || hwloc_topology_load(raw) != 0)
    throw std::runtime_error(shape.name + ": hwloc does not load the XML written for it:\n" + xml);
  unsigned described = 0;
  for (const auto& package : shape.packages)
    for (const auto& host_bridge : package.io) described += pci_devices(host_bridge);
  const int loaded = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PCI_DEVICE);
  if (loaded != int(described))
    throw std::runtime_error(shape.name + ": hwloc shows " + std::to_string(loaded) + " PCI devices, not " +
                             std::to_string(described));
  add_nvlink_matrix(raw, shape.nvlinks);
  if (hwloc_topology_export_xml(raw, path.c_str(), 0) != 0)
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_topology OUTPUT_DIR\n";
    return 2;
  }
  try {
    std::filesystem::create_directories(argv[1]);
    for (const Shape& shape : {h100_node(), m2075_node(), dgx2_node(), power8_node()})
      write_topology(shape, std::string(argv[1]) + "/" + shape.name + ".xml");
  } catch (const std::exception& e) {
    std::cerr << "make_topology: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
