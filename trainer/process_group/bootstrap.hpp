// Who this process is in the job (torchrun's environment contract, nothing
// Slurm-specific) and the start-up handshake: rank 0 hosts the store, every
// rank checks in with its model, and a rank that never arrives is named.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"
#include "process_group/store.hpp"

namespace ddp::train {

struct WorkerIdentity {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int group_rank = -1;        // GROUP_RANK: this node's index (-1: not given)
  int group_world_size = -1;  // GROUP_WORLD_SIZE: nodes in the job
  std::string master_addr;  // empty: a single process started by hand
  std::uint16_t master_port = 0;
  int attempt = 0;  // TORCHELASTIC_RESTART_COUNT
  std::string run_id = "none";
  bool standalone() const { return master_addr.empty(); }
};

// Reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
// GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RESTART_COUNT and
// TORCHELASTIC_RUN_ID through `get` (nullptr = unset). None of RANK,
// WORLD_SIZE and MASTER_ADDR set = one process on its own.
Result<WorkerIdentity> read_worker_identity(const std::function<const char*(const char*)>& get);

struct Session {
  WorkerIdentity id;
  std::unique_ptr<StoreServer> server;  // rank 0 only
  std::unique_ptr<StoreClient> store;   // every rank, rank 0 included
  std::string key(const std::string& name) const { return store_key(id.run_id, id.attempt, name); }
};

// Starts the store (rank 0), connects, publishes `fingerprint` (the model and
// run settings every rank must share) with this host's name, waits for every
// rank and compares fingerprints with rank 0's. Errors name the missing or
// mismatching ranks and their hosts.
Result<Session> bootstrap(const WorkerIdentity& id, const std::string& fingerprint,
                          std::chrono::milliseconds timeout);

// "0-3,7" for the missing-rank messages (pure; tested).
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace ddp::train
