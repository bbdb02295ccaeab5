// Binding plans on GPU node topologies: hwloc XML that
// tests/topologies/make_topology.cpp writes into the build tree from a short
// description of each node, and our capture of a one-GPU VM. The expected
// values were worked out by hand from those descriptions (see the comments
// and tests/topologies/README.md), not produced by the code under test.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ddp/base/cpu_list.hpp"
#include "ddp/node/topology.hpp"
#include "ddp/plan/binding.hpp"
#include "suites.hpp"

using namespace ddp;
namespace fs = std::filesystem;

namespace {

std::string xml(const char* name) { return std::string(DDP_TOPOLOGIES_DIR) + "/" + name; }

Topology load(const char* name) {
  auto topo = load_topology_xml(xml(name));
  ck_assert_msg(topo.ok(), "%s", topo.ok() ? "" : topo.error().c_str());
  return *topo;
}

// Spelled out independently of cpu_list(): "0,1,2".
std::string pus(const std::vector<unsigned>& v) {
  std::string out;
  for (unsigned x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// Cores as "0,16 1,17": PUs of a core joined by commas, cores by blanks.
std::string cores(const std::vector<std::vector<unsigned>>& v) {
  std::string out;
  for (const auto& core : v) out += (out.empty() ? "" : " ") + pus(core);
  return out;
}

std::string paths(const std::vector<PathType>& v) {
  std::string out;
  for (PathType p : v) out += (out.empty() ? "" : " ") + std::string(to_string(p));
  return out;
}

std::string bus_ids(const Topology& t) {
  std::string out;
  for (const auto& g : t.gpus) out += (out.empty() ? "" : " ") + g.bus_id;
  return out;
}

std::string all_warnings(const BindingPlan& plan) {
  std::string out;
  for (const auto& w : plan.warnings) out += w + "\n";
  return out;
}

std::string topology_scratch() {
  char tmpl[] = "/tmp/ddp-binding-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// What the NVIDIA driver writes into /proc/driver/nvidia/gpus/<bus id>/information.
std::string information(const std::string& bus_id, const std::string& minor_line) {
  return "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 137\nGPU UUID: \t GPU-00000000-0000-0000-0000-000000000000\n"
         "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"
         "Bus Location: \t " +
         bus_id + "\n" + minor_line + "\nGPU Excluded:\t No\n";
}

const char* const kH100 = "2s-4xH100-2xmlx5.xml";
const char* const kM2075 = "2s-16c-3xM2075-mlx5.xml";
const char* const kDgx2 = "dgx2-16xV100-nvswitch.xml";
const char* const kPower8 = "power8-4xP100-nvlink.xml";

}  // namespace

// 2s-4xH100-2xmlx5.xml: package 0 = PUs 0-3 (one PU per core) with GPUs
// 18:00.0, 19:00.0 and mlx5_0 (1a:00.0) on the downstream ports of one PCIe
// switch (upstream port 16:00.0), and GPU 2c:00.0 under a host bridge of its
// own; package 1 = PUs 4-7 with GPU 98:00.0 and mlx5_1 (9a:00.0) on one switch.
START_TEST(h100_gpus_nics_and_local_cores) {
  const auto t = load(kH100);
  CK_STR_EQ(bus_ids(t), "0000:18:00.0 0000:19:00.0 0000:2c:00.0 0000:98:00.0");
  CK_STR_EQ(cores(t.gpus[0].local_cores), "0 1 2 3");
  CK_STR_EQ(cores(t.gpus[1].local_cores), "0 1 2 3");
  CK_STR_EQ(cores(t.gpus[2].local_cores), "0 1 2 3");
  CK_STR_EQ(cores(t.gpus[3].local_cores), "4 5 6 7");
  ck_assert_uint_eq(t.nics.size(), 2);
  CK_STR_EQ(t.nics[0].name, "mlx5_0");
  CK_STR_EQ(t.nics[0].bus_id, "0000:1a:00.0");
  CK_STR_EQ(t.nics[1].name, "mlx5_1");
  CK_STR_EQ(t.nics[1].bus_id, "0000:9a:00.0");
  CK_STR_EQ(cores(t.allowed_cores), "0 1 2 3 4 5 6 7");
}
END_TEST

START_TEST(h100_path_types) {
  const auto t = load(kH100);
  ck_assert_uint_eq(t.gpu_nic_path.size(), 4);
  // columns: mlx5_0, mlx5_1
  CK_STR_EQ(paths(t.gpu_nic_path[0]), "PIX SYS");   // 18: same switch as mlx5_0
  CK_STR_EQ(paths(t.gpu_nic_path[1]), "PIX SYS");   // 19: same switch as mlx5_0
  CK_STR_EQ(paths(t.gpu_nic_path[2]), "NODE SYS");  // 2c: other host bridge, same NUMA node
  CK_STR_EQ(paths(t.gpu_nic_path[3]), "SYS PIX");   // 98: same switch as mlx5_1
}
END_TEST

START_TEST(h100_plan_all_gpus_in_step_order) {
  const auto t = load(kH100);
  // Slurm's order, not the bus order: the three package-0 GPUs share 4 cores
  // (2+1+1, the first of them in step order gets the extra core), 98 has
  // package 1 to itself.
  const auto plan = plan_gpu_binding(t, {"0000:98:00.0", "0000:19:00.0", "0000:18:00.0", "0000:2c:00.0"}, {});
  ck_assert_uint_eq(plan.workers.size(), 4);
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
  CK_STR_EQ(plan.workers[0].gpu_bus_id, "0000:98:00.0");
  CK_STR_EQ(pus(plan.workers[0].cpus), "4,5,6,7");
  CK_STR_EQ(pus(plan.workers[1].cpus), "0,1");
  CK_STR_EQ(pus(plan.workers[2].cpus), "2");
  CK_STR_EQ(pus(plan.workers[3].cpus), "3");
  CK_STR_EQ(plan.workers[0].nic, "mlx5_1");
  ck_assert(plan.workers[0].nic_path == PathType::PIX);
  CK_STR_EQ(plan.workers[1].nic, "mlx5_0");
  ck_assert(plan.workers[1].nic_path == PathType::PIX);
  CK_STR_EQ(plan.workers[2].nic, "mlx5_0");
  ck_assert(plan.workers[2].nic_path == PathType::PIX);
  CK_STR_EQ(plan.workers[3].nic, "mlx5_0");  // only through the NUMA node, still better than SYS
  ck_assert(plan.workers[3].nic_path == PathType::NODE);
}
END_TEST

START_TEST(h100_two_gpus_split_their_package) {
  const auto t = load(kH100);
  const auto plan = plan_gpu_binding(t, {"0000:18:00.0", "0000:19:00.0"}, {});
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1");
  CK_STR_EQ(pus(plan.workers[1].cpus), "2,3");
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
}
END_TEST

START_TEST(h100_allowed_subset_restricts_each_gpu) {
  const auto t = load(kH100);
  const auto plan = plan_gpu_binding(t, {"0000:18:00.0", "0000:19:00.0", "0000:98:00.0"}, {{1}, {2}, {5}});
  CK_STR_EQ(pus(plan.workers[0].cpus), "1");
  CK_STR_EQ(pus(plan.workers[1].cpus), "2");
  CK_STR_EQ(pus(plan.workers[2].cpus), "5");
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
}
END_TEST

START_TEST(h100_no_local_core_allowed_falls_back_with_warning) {
  const auto t = load(kH100);
  // The step only has package 1, both GPUs are on package 0.
  const auto plan = plan_gpu_binding(t, {"0000:18:00.0", "0000:19:00.0"}, {{4}, {5}, {6}, {7}});
  CK_STR_EQ(pus(plan.workers[0].cpus), "4,5");
  CK_STR_EQ(pus(plan.workers[1].cpus), "6,7");
  CK_STR_EQ(plan.workers[0].nic, "mlx5_0");  // the NIC still follows the GPU
  ck_assert_uint_eq(plan.warnings.size(), 2);
  CK_CONTAINS(plan.warnings[0], "0000:18:00.0");
  CK_CONTAINS(plan.warnings[0], "CPUs 0-3");
  CK_CONTAINS(plan.warnings[0], "--gres-flags=enforce-binding");
  CK_CONTAINS(plan.warnings[1], "0000:19:00.0");
}
END_TEST

START_TEST(unknown_gpu_is_left_unbound_with_warning) {
  const auto t = load(kH100);
  const auto plan = plan_gpu_binding(t, {"0000:18:00.0", "0000:3b:00.0", "not-a-bus-id"}, {});
  ck_assert_uint_eq(plan.workers.size(), 3);
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,2,3");  // alone on package 0
  CK_STR_EQ(plan.workers[1].gpu_bus_id, "0000:3b:00.0");
  ck_assert(plan.workers[1].cpus.empty());
  CK_STR_EQ(plan.workers[1].nic, "");
  ck_assert(!plan.workers[1].nic_path.has_value());
  ck_assert(plan.workers[2].cpus.empty());
  ck_assert_uint_eq(plan.warnings.size(), 2);
  CK_CONTAINS(plan.warnings[0], "0000:3b:00.0");
  CK_CONTAINS(plan.warnings[0], "not in this node's hwloc topology");
  CK_CONTAINS(plan.warnings[0], "lstopo");
  CK_CONTAINS(plan.warnings[1], "not-a-bus-id");
}
END_TEST

START_TEST(gpu_bus_ids_match_in_any_spelling) {
  const auto t = load(kH100);
  const auto plan = plan_gpu_binding(t, {"00000000:98:00.0", "1A:00.0"}, {});
  ck_assert_uint_eq(plan.warnings.size(), 1);                 // 1a:00.0 is the HCA, not a GPU
  CK_STR_EQ(plan.workers[0].gpu_bus_id, "00000000:98:00.0");  // kept as given
  CK_STR_EQ(pus(plan.workers[0].cpus), "4,5,6,7");
  CK_STR_EQ(plan.workers[0].nic, "mlx5_1");
}
END_TEST

// 2s-16c-3xM2075-mlx5.xml: package 0 = cores {0,16}..{7,23} with GPU 03:00.0
// (05:03.0 is a Matrox VGA, vendor 102b: not a GPU) under a host bridge of
// buses 00-05; package 1 = cores {8,24}..{15,31} with GPUs 83:00.0 (root port
// 80:02.0) and 84:00.0 (root port 80:03.0, bus 84 only; the 84:00.1 VGA
// function beside it is AMD, vendor 1002), and the ConnectX-4 mlx5_0, whose
// bus id says 04:00.0 although it sits behind root port 80:03.0 next to GPU
// 84:00.0. Locality read from bus numbers would put mlx5_0 on package 0.
START_TEST(m2075_gpus_nics_and_local_cores) {
  const auto t = load(kM2075);
  CK_STR_EQ(bus_ids(t), "0000:03:00.0 0000:83:00.0 0000:84:00.0");  // not the 84:00.1 VGA
  CK_STR_EQ(cores(t.gpus[0].local_cores), "0,16 1,17 2,18 3,19 4,20 5,21 6,22 7,23");
  CK_STR_EQ(cores(t.gpus[1].local_cores), "8,24 9,25 10,26 11,27 12,28 13,29 14,30 15,31");
  CK_STR_EQ(cores(t.gpus[2].local_cores), "8,24 9,25 10,26 11,27 12,28 13,29 14,30 15,31");
  ck_assert_uint_eq(t.nics.size(), 1);
  CK_STR_EQ(t.nics[0].name, "mlx5_0");
  CK_STR_EQ(t.nics[0].bus_id, "0000:04:00.0");
  CK_STR_EQ(paths(t.gpu_nic_path[0]), "SYS");  // other package, whatever bus 04 suggests
  CK_STR_EQ(paths(t.gpu_nic_path[1]), "PHB");  // same host bridge, different root ports
  CK_STR_EQ(paths(t.gpu_nic_path[2]), "PIX");  // same root port
  CK_STR_EQ(cores(t.allowed_cores),
            "0,16 1,17 2,18 3,19 4,20 5,21 6,22 7,23 8,24 9,25 10,26 11,27 12,28 13,29 14,30 15,31");
}
END_TEST

// The AMD VGA function 84:00.1 is no GPU: a step naming it gets an unbound
// worker and a warning, and its NVIDIA sibling 84:00.0 keeps package 1 and
// the HCA beside it.
START_TEST(m2075_vga_function_beside_gpu_is_not_a_gpu) {
  const auto t = load(kM2075);
  const auto plan = plan_gpu_binding(t, {"0000:84:00.0", "0000:84:00.1"}, {});
  ck_assert_uint_eq(plan.workers.size(), 2);
  CK_STR_EQ(pus(plan.workers[0].cpus), "8,9,10,11,12,13,14,15,24,25,26,27,28,29,30,31");
  CK_STR_EQ(plan.workers[0].nic, "mlx5_0");
  ck_assert(plan.workers[0].nic_path == PathType::PIX);
  ck_assert(plan.workers[1].cpus.empty());
  CK_STR_EQ(plan.workers[1].nic, "");
  ck_assert_uint_eq(plan.warnings.size(), 1);
  CK_CONTAINS(plan.warnings[0], "0000:84:00.1");
  CK_CONTAINS(plan.warnings[0], "not in this node's hwloc topology");
}
END_TEST

START_TEST(m2075_plan_keeps_hyperthreads_together) {
  const auto t = load(kM2075);
  const auto plan = plan_gpu_binding(t, {"0000:03:00.0", "0000:83:00.0", "0000:84:00.0"}, {});
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,2,3,4,5,6,7,16,17,18,19,20,21,22,23");
  CK_STR_EQ(pus(plan.workers[1].cpus), "8,9,10,11,24,25,26,27");
  CK_STR_EQ(pus(plan.workers[2].cpus), "12,13,14,15,28,29,30,31");
  CK_STR_EQ(plan.workers[0].nic, "mlx5_0");
  ck_assert(plan.workers[0].nic_path == PathType::SYS);
  ck_assert(plan.workers[1].nic_path == PathType::PHB);
  ck_assert(plan.workers[2].nic_path == PathType::PIX);
}
END_TEST

START_TEST(m2075_allowed_subset_is_intersected_per_pu) {
  const auto t = load(kM2075);
  // The step has core {8,24} whole and only PU 25 of core {9,25}.
  const auto plan = plan_gpu_binding(t, {"0000:83:00.0", "0000:84:00.0"}, {{8, 24}, {25}});
  CK_STR_EQ(pus(plan.workers[0].cpus), "8,24");
  CK_STR_EQ(pus(plan.workers[1].cpus), "25");
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
}
END_TEST

// tests/topologies/h200-vm-1gpu.xml: lstopo on a one-GPU H200 VM (the
// machine of bench/results/gpu-slurm-h200.md): one package of 16 cores, one NUMA
// node, the GPU at 00:06.0 right under the machine, no RDMA NIC. The topology
// shows no locality, so the GPU's local cores are all 16 and its worker gets
// them all, with no warning (a VM is not a misconfigured node).
START_TEST(h200_vm_without_locality_binds_every_core) {
  const auto t = load_topology_xml(std::string(DDP_OWN_TOPOLOGIES_DIR) + "/h200-vm-1gpu.xml");
  ck_assert_msg(t.ok(), "%s", t.ok() ? "" : t.error().c_str());
  CK_STR_EQ(bus_ids(*t), "0000:00:06.0");
  ck_assert_uint_eq(t->gpus[0].local_cores.size(), 16);
  ck_assert_uint_eq(t->nics.size(), 0);
  const auto plan = plan_gpu_binding(*t, {"0000:00:06.0"}, {});
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
  CK_STR_EQ(plan.workers[0].nic, "");
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
}
END_TEST

// dgx2-16xV100-nvswitch.xml, seen from a job whose cgroup allows PUs 0, 1, 24
// and 25 of the 96: package 0 = PUs 0 and 1 (one allowed per core) with GPUs
// 34 36 39 3b 57 59 5c 5e, package 1 = PUs 24 and 25 with b7 b9 bc be e0 e2
// e5 e7; the 12 NVSwitches (NVIDIA, class 0680) are not GPUs; no HCAs.
START_TEST(dgx2_sixteen_gpus_no_nics) {
  const auto t = load(kDgx2);
  CK_STR_EQ(bus_ids(t),
            "0000:34:00.0 0000:36:00.0 0000:39:00.0 0000:3b:00.0 0000:57:00.0 0000:59:00.0 0000:5c:00.0 "
            "0000:5e:00.0 0000:b7:00.0 0000:b9:00.0 0000:bc:00.0 0000:be:00.0 0000:e0:00.0 0000:e2:00.0 "
            "0000:e5:00.0 0000:e7:00.0");
  for (std::size_t i = 0; i < 8; ++i) CK_STR_EQ(cores(t.gpus[i].local_cores), "0 1");
  for (std::size_t i = 8; i < 16; ++i) CK_STR_EQ(cores(t.gpus[i].local_cores), "24 25");
  ck_assert_uint_eq(t.nics.size(), 0);
  ck_assert_uint_eq(t.gpu_nic_path.size(), 16);
  ck_assert(t.gpu_nic_path[0].empty());
  CK_STR_EQ(cores(t.allowed_cores), "0 1 24 25");
}
END_TEST

START_TEST(dgx2_more_gpus_than_cores_round_robin) {
  const auto t = load(kDgx2);
  std::vector<std::string> ids;
  for (const auto& g : t.gpus) ids.push_back(g.bus_id);
  const auto plan = plan_gpu_binding(t, ids, {});
  ck_assert_uint_eq(plan.workers.size(), 16);
  std::string got;
  for (const auto& w : plan.workers) got += pus(w.cpus) + " ";
  CK_STR_EQ(got, "0 1 0 1 0 1 0 1 24 25 24 25 24 25 24 25 ");
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
  for (const auto& w : plan.workers) {
    CK_STR_EQ(w.nic, "");
    ck_assert(!w.nic_path.has_value());
  }
}
END_TEST

// power8-4xP100-nvlink.xml (SMT2, a cgroup allowing 4 of each package's 10
// cores): package 0 = cores {0,1} {8,9} {16,17} {24,25} with GPUs in PCI
// domains 0002 and 0003; package 1 = cores {80,81} {88,89} {96,97} {104,105}
// with domains 000a and 000b; no HCAs. The NVLink matrix changes nothing.
START_TEST(power8_gpus_in_pci_domains) {
  const auto t = load(kPower8);
  CK_STR_EQ(bus_ids(t), "0002:01:00.0 0003:01:00.0 000a:01:00.0 000b:01:00.0");
  CK_STR_EQ(cores(t.gpus[0].local_cores), "0,1 8,9 16,17 24,25");
  CK_STR_EQ(cores(t.gpus[1].local_cores), "0,1 8,9 16,17 24,25");
  CK_STR_EQ(cores(t.gpus[2].local_cores), "80,81 88,89 96,97 104,105");
  CK_STR_EQ(cores(t.gpus[3].local_cores), "80,81 88,89 96,97 104,105");
  ck_assert_uint_eq(t.nics.size(), 0);
  CK_STR_EQ(cores(t.allowed_cores), "0,1 8,9 16,17 24,25 80,81 88,89 96,97 104,105");
  const auto plan = plan_gpu_binding(t, {"0002:01:00.0", "0003:01:00.0", "000a:01:00.0", "000b:01:00.0"}, {});
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,8,9");
  CK_STR_EQ(pus(plan.workers[1].cpus), "16,17,24,25");
  CK_STR_EQ(pus(plan.workers[2].cpus), "80,81,88,89");
  CK_STR_EQ(pus(plan.workers[3].cpus), "96,97,104,105");
  CK_STR_EQ(plan.workers[3].nic, "");
}
END_TEST

// Three GPUs on one 4-core package: 2 + 1 + 1, hand-made cores.
START_TEST(split_cores_fairly_rules) {
  const std::vector<std::vector<unsigned>> four = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  auto s = split_cores_fairly(four, 3);
  ck_assert_uint_eq(s.size(), 3);
  CK_STR_EQ(pus(s[0]), "0,1,4,5");
  CK_STR_EQ(pus(s[1]), "2,6");
  CK_STR_EQ(pus(s[2]), "3,7");
  s = split_cores_fairly({{0}, {1}}, 3);
  CK_STR_EQ(pus(s[0]) + "|" + pus(s[1]) + "|" + pus(s[2]), "0|1|0");
  s = split_cores_fairly({}, 2);
  ck_assert_uint_eq(s.size(), 2);
  ck_assert(s[0].empty() && s[1].empty());
  ck_assert_uint_eq(split_cores_fairly(four, 0).size(), 0);
}
END_TEST

START_TEST(cpu_mode_splits_allowed_cores) {
  auto plan = plan_cpu_binding(load(kH100), 3, {});
  ck_assert_uint_eq(plan.workers.size(), 3);
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,2");
  CK_STR_EQ(pus(plan.workers[1].cpus), "3,4,5");
  CK_STR_EQ(pus(plan.workers[2].cpus), "6,7");
  for (const auto& w : plan.workers) {
    CK_STR_EQ(w.gpu_bus_id, "");
    CK_STR_EQ(w.nic, "");
    ck_assert(!w.nic_path.has_value());
  }
  // 16 two-PU cores for 3 workers: 6 + 5 + 5 cores.
  plan = plan_cpu_binding(load(kM2075), 3, {});
  CK_STR_EQ(pus(plan.workers[0].cpus), "0,1,2,3,4,5,16,17,18,19,20,21");
  CK_STR_EQ(pus(plan.workers[1].cpus), "6,7,8,9,10,22,23,24,25,26");
  CK_STR_EQ(pus(plan.workers[2].cpus), "11,12,13,14,15,27,28,29,30,31");
  // The step's cores, not the machine's; more workers than cores.
  plan = plan_cpu_binding(load(kDgx2), 3, {{1}, {24}});
  CK_STR_EQ(pus(plan.workers[0].cpus) + "|" + pus(plan.workers[1].cpus) + "|" + pus(plan.workers[2].cpus), "1|24|1");
  // Given out of order: shared in os order all the same.
  plan = plan_cpu_binding(load(kH100), 2, {{7}, {2}, {5}, {0}});
  CK_STR_EQ(pus(plan.workers[0].cpus) + "|" + pus(plan.workers[1].cpus), "0,2|5,7");
  ck_assert_uint_eq(plan_cpu_binding(load(kDgx2), 0, {}).workers.size(), 0);
  ck_assert_msg(plan.warnings.empty(), "unexpected: %s", all_warnings(plan).c_str());
}
END_TEST

// A hand-written topology for what the four shapes lack: nested switches (PXB),
// devices at different PCIe depths (PHB), and NIC names past 9.
//   host bridge A: 00:01.0 > { 01:00.0 > 02:00.0 > 03:00.0 > GPU 04:00.0,
//                              01:01.0 > mlx5_10 (05:00.0) },
//                  00:02.0 > mlx5_2 (06:00.0)
//   host bridge B: 10:00.0 > GPU 11:00.0 (class 0300, a VGA-class NVIDIA GPU)
START_TEST(synthetic_pxb_phb_and_nic_name_order) {
  const std::string bridge = R"(pci_type="0604 [1000:c030] [0000:0000] 00" pci_link_speed="0")";
  const std::string set = R"(cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1")";
  const std::string text =
      R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
<object type="Machine" os_index="0" )" +
      set + R"( allowed_cpuset="0x1" allowed_nodeset="0x1" gp_index="1">
<object type="Package" os_index="0" )" +
      set + R"( gp_index="2">
<object type="NUMANode" os_index="0" )" +
      set + R"( gp_index="3"/>
<object type="Core" os_index="0" )" +
      set + R"( gp_index="4"><object type="PU" os_index="0" )" + set + R"( gp_index="5"/></object>
<object type="Bridge" gp_index="10" bridge_type="0-1" depth="0" bridge_pci="0000:[00-0f]">
 <object type="Bridge" gp_index="11" bridge_type="1-1" depth="1" bridge_pci="0000:[01-05]" pci_busid="0000:00:01.0" )" +
      bridge + R"(>
  <object type="Bridge" gp_index="12" bridge_type="1-1" depth="2" bridge_pci="0000:[02-04]" pci_busid="0000:01:00.0" )" +
      bridge + R"(>
   <object type="Bridge" gp_index="13" bridge_type="1-1" depth="3" bridge_pci="0000:[03-04]" pci_busid="0000:02:00.0" )" +
      bridge + R"(>
    <object type="Bridge" gp_index="14" bridge_type="1-1" depth="4" bridge_pci="0000:[04-04]" pci_busid="0000:03:00.0" )" +
      bridge + R"(>
     <object type="PCIDev" gp_index="15" pci_busid="0000:04:00.0" pci_type="0302 [10de:2330] [10de:16c1] a1" pci_link_speed="0"/>
    </object>
   </object>
  </object>
  <object type="Bridge" gp_index="16" bridge_type="1-1" depth="2" bridge_pci="0000:[05-05]" pci_busid="0000:01:01.0" )" +
      bridge + R"(>
   <object type="PCIDev" gp_index="17" pci_busid="0000:05:00.0" pci_type="0207 [15b3:1021] [15b3:0023] 00" pci_link_speed="0">
    <object type="OSDev" gp_index="18" name="mlx5_10" osdev_type="3"/>
   </object>
  </object>
 </object>
 <object type="Bridge" gp_index="19" bridge_type="1-1" depth="1" bridge_pci="0000:[06-06]" pci_busid="0000:00:02.0" )" +
      bridge + R"(>
  <object type="PCIDev" gp_index="20" pci_busid="0000:06:00.0" pci_type="0207 [15b3:1021] [15b3:0023] 00" pci_link_speed="0">
   <object type="OSDev" gp_index="21" name="mlx5_2" osdev_type="3"/>
  </object>
 </object>
</object>
<object type="Bridge" gp_index="30" bridge_type="0-1" depth="0" bridge_pci="0000:[10-1f]">
 <object type="Bridge" gp_index="31" bridge_type="1-1" depth="1" bridge_pci="0000:[11-11]" pci_busid="0000:10:00.0" )" +
      bridge + R"(>
  <object type="PCIDev" gp_index="32" pci_busid="0000:11:00.0" pci_type="0300 [10de:2330] [10de:16c1] a1" pci_link_speed="0"/>
 </object>
</object>
</object>
</object>
</topology>
)";
  const auto dir = topology_scratch();
  write(fs::path(dir) / "synthetic.xml", text);
  const auto t = load_topology_xml(dir + "/synthetic.xml");
  ck_assert_msg(t.ok(), "%s", t.ok() ? "" : t.error().c_str());
  CK_STR_EQ(bus_ids(*t), "0000:04:00.0 0000:11:00.0");
  ck_assert_uint_eq(t->nics.size(), 2);
  CK_STR_EQ(t->nics[0].name, "mlx5_2");  // 2 before 10
  CK_STR_EQ(t->nics[1].name, "mlx5_10");
  // columns: mlx5_2, mlx5_10
  CK_STR_EQ(paths(t->gpu_nic_path[0]), "PHB PXB");    // 3 bridges below 00:01.0 on the GPU side
  CK_STR_EQ(paths(t->gpu_nic_path[1]), "NODE NODE");  // other host bridge, one NUMA node
  const auto plan = plan_gpu_binding(*t, {"0000:04:00.0", "0000:11:00.0"}, {});
  CK_STR_EQ(plan.workers[0].nic, "mlx5_10");
  ck_assert(plan.workers[0].nic_path == PathType::PXB);
  CK_STR_EQ(plan.workers[1].nic, "mlx5_2");  // a tie: the lower index
  CK_STR_EQ(pus(plan.workers[0].cpus), "0");
  CK_STR_EQ(pus(plan.workers[1].cpus), "0");  // one core for two GPUs
  fs::remove_all(dir);
}
END_TEST

START_TEST(xml_errors_name_the_file) {
  const auto missing = load_topology_xml("/nonexistent/topo.xml");
  ck_assert(!missing.ok());
  CK_CONTAINS(missing.error(), "/nonexistent/topo.xml");
  CK_CONTAINS(missing.error(), "lstopo");
  const auto dir = topology_scratch();
  const std::string prose = dir + "/notes.xml";
  write(prose, "Node notes: 2 H100, no InfiniBand.\n");
  const auto not_xml = load_topology_xml(prose);
  ck_assert(!not_xml.ok());
  CK_CONTAINS(not_xml.error(), prose);
  CK_CONTAINS(not_xml.error(), "is it an hwloc XML export");
  fs::remove_all(dir);
}
END_TEST

START_TEST(system_topology_loads) {
  const auto t = load_topology_system();
  ck_assert_msg(t.ok(), "%s", t.ok() ? "" : t.error().c_str());
  ck_assert(!t->allowed_cores.empty());
  for (const auto& core : t->allowed_cores) ck_assert(!core.empty());
  ck_assert_uint_eq(t->gpu_nic_path.size(), t->gpus.size());
}
END_TEST

START_TEST(cpu_list_formats_ranges) {
  CK_STR_EQ(cpu_list({0, 1, 2, 3, 8}), "0-3,8");
  CK_STR_EQ(cpu_list({}), "");
  CK_STR_EQ(cpu_list({5}), "5");
  CK_STR_EQ(cpu_list({0, 1}), "0-1");
  CK_STR_EQ(cpu_list({0, 2, 4}), "0,2,4");
  CK_STR_EQ(cpu_list({3, 1, 2, 2, 10}), "1-3,10");
}
END_TEST

START_TEST(parse_cpu_list_round_trips) {
  auto r = parse_cpu_list("0-3,8");
  ck_assert(r.ok());
  CK_STR_EQ(pus(*r), "0,1,2,3,8");
  r = parse_cpu_list("8,0-1,1\n");  // unsorted, overlapping, sysfs newline
  ck_assert(r.ok());
  CK_STR_EQ(pus(*r), "0,1,8");
  r = parse_cpu_list("");
  ck_assert(r.ok() && r->empty());
  for (const char* text : {"0-3,8", "5", "0,2,4", "0-1", "12-15,28-31", "65535"}) {
    const auto parsed = parse_cpu_list(text);
    ck_assert_msg(parsed.ok(), "%s", text);
    CK_STR_EQ(cpu_list(*parsed), text);
  }
}
END_TEST

START_TEST(parse_cpu_list_rejects_garbage) {
  for (const char* bad : {"a", "1-", "-1", "1,,2", "1,", ",1", "1 ,2", "0x3", "1.5", "3-1", "65536", "0-65536",
                          "99999999999999999999", "0-7:2"}) {
    const auto r = parse_cpu_list(bad);
    ck_assert_msg(!r.ok(), "'%s' was accepted", bad);
    CK_CONTAINS(r.error(), "is not a CPU list");
    CK_CONTAINS(r.error(), "0-3,8");
  }
  CK_CONTAINS(parse_cpu_list("0-2,3-1").error(), "'3-1'");
  CK_CONTAINS(parse_cpu_list("0-2,3-1").error(), "low end is above");
}
END_TEST

START_TEST(bus_ids_normalize) {
  CK_STR_EQ(*normalize_pci_bus_id("0000:18:00.0"), "0000:18:00.0");
  CK_STR_EQ(*normalize_pci_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
  CK_STR_EQ(*normalize_pci_bus_id("9a:00.1"), "0000:9a:00.1");
  CK_STR_EQ(*normalize_pci_bus_id("000B:01:00.0"), "000b:01:00.0");
  for (const char* bad : {"", "18:00", "0000:18:00.8", "0000:18:20.0", "0000:180:00.0", "x:18:00.0", "18.00.0"}) {
    const auto r = normalize_pci_bus_id(bad);
    ck_assert_msg(!r.ok(), "'%s' was accepted", bad);
    CK_CONTAINS(r.error(), "is not a PCI bus id");
  }
}
END_TEST

START_TEST(gpu_minors_from_driver_files) {
  const auto dir = topology_scratch();
  write(fs::path(dir) / "0000:18:00.0" / "information", information("0000:18:00.0", "Device Minor: \t 2"));
  write(fs::path(dir) / "0000:2C:00.0" / "information", information("0000:2C:00.0", "Device Minor: \t 1"));
  write(fs::path(dir) / "0000:98:00.0" / "information", information("0000:98:00.0", "Device Minor: \t 0"));
  const auto m = gpu_minors_to_bus_ids(dir);
  ck_assert_msg(m.ok(), "%s", m.ok() ? "" : m.error().c_str());
  ck_assert_uint_eq(m->size(), 3);
  CK_STR_EQ(m->at(0), "0000:98:00.0");
  CK_STR_EQ(m->at(1), "0000:2c:00.0");  // lower-cased
  CK_STR_EQ(m->at(2), "0000:18:00.0");
  fs::remove_all(dir);

  const auto none = gpu_minors_to_bus_ids(dir + "/no-such-dir");  // a node without the driver
  ck_assert(none.ok());
  ck_assert(none->empty());
}
END_TEST

START_TEST(gpu_minors_errors_name_the_file) {
  const auto dir = topology_scratch();
  const auto one = [&](const std::string& name, const std::string* minor_line) {
    fs::remove_all(dir);
    if (minor_line)
      write(fs::path(dir) / name / "information", information(name, *minor_line));
    else
      fs::create_directories(fs::path(dir) / name);
    return gpu_minors_to_bus_ids(dir);
  };
  const std::string garbage = "Device Minor: \t two", absent = "Bus Type: \t PCIe", ok = "Device Minor: 0";

  auto r = one("0000:18:00.0", &garbage);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), dir + "/0000:18:00.0/information");
  CK_CONTAINS(r.error(), "two");
  r = one("0000:18:00.0", &absent);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), dir + "/0000:18:00.0/information");
  CK_CONTAINS(r.error(), "no 'Device Minor:' line");
  r = one("0000:18:00.0", nullptr);  // no information file
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), "cannot read " + dir + "/0000:18:00.0/information");
  r = one("card0", &ok);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), dir + "/card0");

  fs::remove_all(dir);  // two GPUs claiming one minor
  write(fs::path(dir) / "0000:18:00.0" / "information", information("0000:18:00.0", ok));
  write(fs::path(dir) / "0000:19:00.0" / "information", information("0000:19:00.0", ok));
  r = gpu_minors_to_bus_ids(dir);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), "device minor 0");

  fs::remove_all(dir);  // a file where the directory should be
  write(dir, "not a directory");
  r = gpu_minors_to_bus_ids(dir);
  ck_assert(!r.ok());
  CK_CONTAINS(r.error(), dir + " is not a directory");
  fs::remove(dir);
}
END_TEST

Suite* binding_suite() {
  return make_suite("binding", {h100_gpus_nics_and_local_cores,
                                h100_path_types,
                                h100_plan_all_gpus_in_step_order,
                                h100_two_gpus_split_their_package,
                                h100_allowed_subset_restricts_each_gpu,
                                h100_no_local_core_allowed_falls_back_with_warning,
                                unknown_gpu_is_left_unbound_with_warning,
                                gpu_bus_ids_match_in_any_spelling,
                                m2075_gpus_nics_and_local_cores,
                                m2075_vga_function_beside_gpu_is_not_a_gpu,
                                m2075_plan_keeps_hyperthreads_together,
                                m2075_allowed_subset_is_intersected_per_pu,
                                h200_vm_without_locality_binds_every_core,
                                dgx2_sixteen_gpus_no_nics,
                                dgx2_more_gpus_than_cores_round_robin,
                                power8_gpus_in_pci_domains,
                                split_cores_fairly_rules,
                                cpu_mode_splits_allowed_cores,
                                synthetic_pxb_phb_and_nic_name_order,
                                xml_errors_name_the_file,
                                system_topology_loads,
                                cpu_list_formats_ranges,
                                parse_cpu_list_round_trips,
                                parse_cpu_list_rejects_garbage,
                                bus_ids_normalize,
                                gpu_minors_from_driver_files,
                                gpu_minors_errors_name_the_file});
}
