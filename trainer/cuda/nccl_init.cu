// The NCCL communicators of a run, created so that start-up fails within the
// init timeout instead of hanging. A blocking ncclCommInitRank waits forever
// for a peer that never arrives and cannot be aborted from another thread
// (NVIDIA/nccl issue #289). So:
//   1. the ranks of each node compare the GPUs they took (process_group/gpu_claims.hpp):
//      two ranks on one GPU are refused now, with the fix, not by NCCL later;
//   2. rank 0 publishes NCCL's unique id in the rendezvous store;
//   3. the communicator is created non-blocking (config.blocking = 0) and
//      polled with our own deadline; at the deadline it is aborted;
//   4. with NcclOps::blocking, a blocking communicator is split off it for the
//      collectives (the split is non-blocking too, since its parent is).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "cuda/nccl_init.cuh"
#include "process_group/gpu_claims.hpp"

namespace ddp::train::cuda {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Every local rank publishes its claim, then reads the node's. The node is
// named by hostname and boot id, which all its ranks share even when each
// has its own NCCL_HOSTID.
std::chrono::milliseconds left_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

Status check_node_gpus(const CudaContext& context, const GpuBackendConfig& config, Clock::time_point deadline) {
  char bus_id[32] = {};
  CUDA_TRY(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, context.device));
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown-host");
  const std::string node = node_identity(host, read_first_line("/proc/sys/kernel/random/boot_id"));
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  GpuClaim mine;
  mine.local_rank = config.local_rank;
  mine.nccl_host = nccl_host_identity(std::getenv("NCCL_HOSTID"), node);
  mine.bus_id = bus_id;
  mine.visible = visible ? std::string("=") + visible : std::string("unset");

  const std::string prefix = config.store_prefix + "gpu/" + node + "/";
  if (Status s = config.store->set(prefix + std::to_string(config.local_rank), encode_gpu_claim(mine)); !s)
    return fail("could not publish this rank's GPU in the rendezvous store: " + s.error());
  std::vector<GpuClaim> claims;
  for (int r = 0; r < config.local_world_size; ++r) {
    Result<Bytes> bytes = config.store->get(prefix + std::to_string(r), left_until(deadline));
    if (!bytes)
      return fail("local rank " + std::to_string(r) + " of this node never said which GPU it took: " +
                  bytes.error() + "; it probably failed before starting CUDA, see its output");
    Result<GpuClaim> claim = decode_gpu_claim(r, *bytes);
    if (!claim) return fail(claim.error());
    claims.push_back(*claim);
  }
  return check_gpu_claims(claims);
}

// Rank 0 creates the unique id (it also starts NCCL's bootstrap listener on
// rank 0's node) and publishes it; the others fetch it.
Result<ncclUniqueId> exchange_unique_id(const GpuBackendConfig& config, const std::string& who,
                                        Clock::time_point deadline) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  const std::string key = config.store_prefix + "unique_id";
  if (config.rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return fail(nccl_error_text(r, nullptr, "ncclGetUniqueId(&id)", __FILE__, __LINE__));
    if (config.store) {
      const Status published = config.store->set(key, Bytes(id.internal, id.internal + sizeof id.internal));
      if (!published) return fail("could not publish the NCCL unique id in the rendezvous store: " + published.error());
    }
    return id;
  }
  const Result<Bytes> bytes = config.store->get(key, left_until(deadline));
  if (!bytes)
    return fail(who + " got no NCCL unique id from rank 0 (store key " + key + "): " + bytes.error() +
                "; rank 0 probably failed before creating it, see its output");
  if (bytes->size() != sizeof id.internal)
    return fail("the NCCL unique id in the store has " + std::to_string(bytes->size()) + " bytes, not " +
                std::to_string(sizeof id.internal) + ": do all nodes run the same ddp-train and NCCL?");
  std::memcpy(id.internal, bytes->data(), sizeof id.internal);
  return id;
}

std::string not_ready_text(const std::string& what, const std::string& who, std::chrono::milliseconds timeout) {
  return what + " (" + who + ") was not ready within the init timeout of " + seconds_text(timeout) +
         ": a peer never started or died before joining, or the nodes cannot reach each other (check "
         "NCCL_SOCKET_IFNAME names an interface every node has, and firewalls; NCCL_DEBUG=INFO shows what NCCL "
         "tried)";
}

}  // namespace

std::string nccl_version_text() {
  int code = 0;
  ncclGetVersion(&code);
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", ms.count() / 1000.0);
  return text;
}

ncclResult_t wait_until_ready(ncclComm_t comm, Clock::time_point deadline) {
  ncclResult_t state = ncclInProgress;
  for (;;) {
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    if (query != ncclSuccess) return query;
    if (state != ncclInProgress || Clock::now() > deadline) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

namespace {

// A split off a non-blocking parent runs on a thread of NCCL's own (NCCL
// 2.28, src/group.cc): the parent's async error reads ncclInProgress until
// that thread is done, then the split's result, and the child's handle is
// published (src/init.cc, a release store) before it, also when the child's
// setup failed. So the parent's state is the answer; the handle alone is not
// (read as soon as ncclCommSplit returns, it can still be null).
ncclResult_t wait_for_split(ncclComm_t parent, ncclComm_t* child, Clock::time_point deadline) {
  if (const ncclResult_t state = wait_until_ready(parent, deadline); state != ncclSuccess) return state;
  while (!__atomic_load_n(child, __ATOMIC_ACQUIRE)) {
    if (Clock::now() > deadline) return ncclInProgress;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ncclSuccess;
}

}  // namespace

Result<NcclComms> create_nccl_comms(const CudaContext& context, const GpuBackendConfig& config) {
  const auto deadline = Clock::now() + config.init_timeout;
  const int rank = config.rank;
  const int world = config.world_size;
  const std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(world);
  if (world < 1 || rank < 0 || rank >= world) return fail("invalid NCCL rank: " + who);
  if (world > 1 && !config.store)
    return fail("NCCL with several ranks needs the rendezvous store (a bug in ddp-train)");
  CUDA_TRY(cudaSetDevice(context.device));  // NCCL binds the communicator to the current device

  if (config.store && config.local_world_size > 1)
    if (Status s = check_node_gpus(context, config, deadline); !s) return fail(s.error());
  Result<ncclUniqueId> id = exchange_unique_id(config, who, deadline);
  if (!id) return fail(id.error());

  NcclComms comms;
  ncclConfig_t init_config = NCCL_CONFIG_INITIALIZER;
  init_config.blocking = 0;
  ncclResult_t state = ncclCommInitRankConfig(&comms.init, world, *id, rank, &init_config);
  if (state == ncclInProgress && comms.init) state = wait_until_ready(comms.init, deadline);
  if (state != ncclSuccess || !comms.init) {
    const std::string text = state == ncclInProgress
                                 ? not_ready_text("the NCCL communicator", who, config.init_timeout)
                                 : "could not create the NCCL communicator (" + who + "): " +
                                       nccl_error_text(state, comms.init, "ncclCommInitRankConfig", __FILE__, __LINE__);
    if (comms.init) ncclCommAbort(comms.init);
    return fail(text);
  }
  comms.ops = comms.init;
  if (config.ops == NcclOps::nonblocking) return comms;

  // The blocking communicator for the collectives: same ranks, same order.
  ncclConfig_t ops_config = NCCL_CONFIG_INITIALIZER;
  ops_config.blocking = 1;
  // NCCL's thread writes the child's handle when the split is done, maybe
  // after a timeout here: the slot lives on the heap and is left to it then.
  auto slot = std::make_unique<ncclComm_t>(nullptr);
  state = ncclCommSplit(comms.init, 0, rank, slot.get(), &ops_config);
  // ncclCommSplit answers ncclSuccess, not ncclInProgress, when the group it
  // launched is still running (its ncclGroupEndInternal's ncclInProgress is
  // only checked, not returned): wait for the split after either.
  if (state == ncclSuccess || state == ncclInProgress) state = wait_for_split(comms.init, slot.get(), deadline);
  ncclComm_t ops = __atomic_load_n(slot.get(), __ATOMIC_ACQUIRE);
  if (state == ncclInProgress && !ops) (void)slot.release();  // still NCCL's to write
  if (state != ncclSuccess) {
    const std::string text = state == ncclInProgress
                                 ? not_ready_text("the blocking NCCL communicator split off the first", who,
                                                  config.init_timeout)
                                 : "could not split the blocking NCCL communicator (" + who + "): " +
                                       nccl_error_text(state, comms.init, "ncclCommSplit", __FILE__, __LINE__) +
                                       "; --nccl-ops nonblocking avoids the split";
    ncclCommAbort(comms.init);
    if (ops) ncclCommAbort(ops);
    return fail(text);
  }
  comms.ops = ops;
  comms.blocking_ops = true;
  return comms;
}

}  // namespace ddp::train::cuda
