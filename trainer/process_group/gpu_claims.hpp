// Two ranks on one GPU. NCCL refuses a communicator in which two ranks of one
// host drive the same GPU ("Duplicate GPU detected"), but only inside
// ncclCommInitRank, after every rank has waited for the others, and its words
// do not say which launch setting is wrong. So before NCCL starts, the ranks of
// a node publish the GPU each one took (its PCI bus id) and the host NCCL will
// believe it is on, and each checks the node's claims (the store exchange is in
// cuda/nccl_init.cu; the rules are here, pure, and unit-tested).
//
// NCCL's own rule (src/init.cc, 2.28): ranks collide when both their host hash
// and their GPU's bus id are equal; the host hash is NCCL_HOSTID when set, else
// the hostname with the kernel's boot id. Giving each rank its own NCCL_HOSTID
// is how a test shares one GPU between ranks on purpose (they then talk over
// NCCL's network transport).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "process_group/store.hpp"

namespace ddp::train {

struct GpuClaim {
  int local_rank = 0;
  std::string nccl_host;  // what NCCL takes this rank's host to be
  std::string bus_id;     // the GPU's PCI address, "0000:18:00.0"
  std::string visible;    // this rank's CUDA_VISIBLE_DEVICES ("unset" if so), for the message
};

// The node as every rank on it names it, whatever NCCL_HOSTID says: the
// hostname with the boot id, so that two machines of one name differ.
std::string node_identity(const std::string& hostname, const std::string& boot_id);
// NCCL's host: NCCL_HOSTID if set and not empty, else the node identity.
std::string nccl_host_identity(const char* nccl_hostid, const std::string& node);

Bytes encode_gpu_claim(const GpuClaim& claim);
Result<GpuClaim> decode_gpu_claim(int local_rank, const Bytes& bytes);

// Ok, or one message naming the two local ranks that share a GPU under one
// NCCL host, the GPU, and the fixes (one rank per GPU; NCCL_HOSTID per rank to
// share on purpose). The same message on every rank of the node.
Status check_gpu_claims(const std::vector<GpuClaim>& claims);

}  // namespace ddp::train
