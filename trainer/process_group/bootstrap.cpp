#include "process_group/bootstrap.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ddp::train {
namespace {

Result<long> read_int(const std::function<const char*(const char*)>& get, const char* name, long low, long high,
                      long fallback, bool required) {
  const char* value = get(name);
  if (!value || !*value) {
    if (required) return fail(std::string(name) + " is not set: start ddp-train through srun --ddp, ddp-agent or torchrun (which set RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), or set none of them to train in one process");
    return fallback;
  }
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || v < low || v > high)
    return fail(std::string(name) + "=" + value + " is not a number in " + std::to_string(low) + ".." +
                std::to_string(high));
  return v;
}

std::string hostname() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// Rank 0 starts the store; every rank connects to it.
Result<Session> connect_store(const WorkerIdentity& id, std::chrono::milliseconds timeout) {
  Session s;
  s.id = id;
  if (id.rank == 0) {
    // Every rank holds a connection for the whole run; the margin covers
    // reconnects and the odd stranger without letting a flood take rank 0's
    // descriptors.
    auto server = StoreServer::listen(id.master_port, std::size_t(id.world_size) + 64);
    if (!server) return fail(server.error());
    s.server = std::move(server).value();
  }
  // Rank 0 talks to its own server over loopback (MASTER_ADDR may name an
  // address this host holds on another interface; loopback always works).
  auto client = id.rank == 0 ? StoreClient::connect("127.0.0.1", s.server->port(), timeout)
                             : StoreClient::connect(id.master_addr, id.master_port, timeout);
  if (!client) return fail("rank " + std::to_string(id.rank) + ": " + client.error());
  s.store = std::move(client).value();
  return s;
}

// This rank's host name and fingerprint, under arrived/<rank> and model/<rank>.
Status check_in(Session& s, const std::string& fingerprint) {
  const std::string me = hostname();
  const std::string rank = std::to_string(s.id.rank);
  if (auto st = s.store->set(s.key("arrived/" + rank), Bytes(me.begin(), me.end())); !st) return st;
  return s.store->set(s.key("model/" + rank), Bytes(fingerprint.begin(), fingerprint.end()));
}

// Every rank's arrival, or an error naming the ranks that never came.
Status await_every_rank(Session& s, std::chrono::milliseconds timeout) {
  const WorkerIdentity& id = s.id;
  std::vector<std::string> keys;
  for (int r = 0; r < id.world_size; ++r) keys.push_back(s.key("arrived/" + std::to_string(r)));
  if (s.store->wait(keys, timeout)) return Ok{};
  auto absent = s.store->missing(keys);
  std::vector<int> missing;
  if (absent)
    for (const std::string& k : *absent) missing.push_back(std::stoi(k.substr(k.rfind('/') + 1)));
  return fail("start-up: rank" + std::string(missing.size() == 1 ? " " : "s ") + rank_ranges(missing) + " of " +
              std::to_string(id.world_size) + " did not arrive within " + std::to_string(timeout.count() / 1000) +
              " s (store " + s.store->endpoint() + ", run " + id.run_id + ", attempt " + std::to_string(id.attempt) +
              "): check that every rank was started with the same WORLD_SIZE, MASTER_ADDR and MASTER_PORT, and look "
              "for its error above");
}

struct Arrival {
  std::string fingerprint;
  std::string host;
};

Result<Arrival> arrival_of(Session& s, int rank, std::chrono::milliseconds timeout) {
  auto model = s.store->get(s.key("model/" + std::to_string(rank)), timeout);
  if (!model) return fail(model.error());
  auto host = s.store->get(s.key("arrived/" + std::to_string(rank)), timeout);
  if (!host) return fail(host.error());
  return Arrival{std::string(model->begin(), model->end()), std::string(host->begin(), host->end())};
}

// Every rank compares itself with rank 0; rank 0 compares everyone, so the
// mismatch is reported on both sides.
Status compare_with_rank_0(Session& s, std::chrono::milliseconds timeout) {
  auto reference = arrival_of(s, 0, timeout);
  if (!reference) return fail(reference.error());
  std::vector<int> check;
  if (s.id.rank == 0)
    for (int r = 1; r < s.id.world_size; ++r) check.push_back(r);
  else
    check.push_back(s.id.rank);
  for (int r : check) {
    auto other = arrival_of(s, r, timeout);
    if (!other) return fail(other.error());
    if (other->fingerprint != reference->fingerprint)
      return fail("rank " + std::to_string(r) + " (" + other->host + ") runs " + other->fingerprint + " but rank 0 (" +
                  reference->host + ") runs " + reference->fingerprint +
                  ": every rank must get the same model, data and batch options");
  }
  return Ok{};
}

}  // namespace

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    i = j + 1;
  }
  return out;
}

Result<WorkerIdentity> read_worker_identity(const std::function<const char*(const char*)>& get) {
  WorkerIdentity id;
  const bool launched = get("RANK") || get("WORLD_SIZE") || get("MASTER_ADDR");
  if (!launched) return id;
  auto world = read_int(get, "WORLD_SIZE", 1, 1 << 20, 1, true);
  if (!world) return fail(world.error());
  auto rank = read_int(get, "RANK", 0, *world - 1, 0, true);
  if (!rank) return fail(rank.error() + " (WORLD_SIZE=" + std::to_string(*world) + ")");
  auto local_world = read_int(get, "LOCAL_WORLD_SIZE", 1, 1 << 16, 1, false);
  if (!local_world) return fail(local_world.error());
  auto local_rank = read_int(get, "LOCAL_RANK", 0, *local_world - 1, 0, false);
  if (!local_rank) return fail(local_rank.error());
  auto groups = read_int(get, "GROUP_WORLD_SIZE", 1, 1 << 20, -1, false);
  if (!groups) return fail(groups.error());
  auto group = read_int(get, "GROUP_RANK", 0, *groups > 0 ? *groups - 1 : 1 << 20, -1, false);
  if (!group) return fail(group.error());
  auto port = read_int(get, "MASTER_PORT", 1, 65535, 0, true);
  if (!port) return fail(port.error());
  auto attempt = read_int(get, "TORCHELASTIC_RESTART_COUNT", 0, 1 << 20, 0, false);
  if (!attempt) return fail(attempt.error());
  const char* addr = get("MASTER_ADDR");
  if (!addr || !*addr) return fail("MASTER_ADDR is not set (the host of rank 0): start ddp-train through srun --ddp, ddp-agent or torchrun");
  // torchrun's static rendezvous hosts its own TCPStore on MASTER_PORT and
  // tells workers to join it; ddp-train hosts its own store there instead.
  const char* agent_store = get("TORCHELASTIC_USE_AGENT_STORE");
  if (agent_store && std::string(agent_store) == "True")
    return fail("torchrun's static rendezvous owns MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True); ddp-train hosts "
                "its own store there: run torchrun with --rdzv_backend=c10d (or --standalone)");
  id.world_size = int(*world);
  id.rank = int(*rank);
  id.local_world_size = int(*local_world);
  id.local_rank = int(*local_rank);
  id.group_rank = int(*group);
  id.group_world_size = int(*groups);
  id.master_port = std::uint16_t(*port);
  id.master_addr = addr;
  id.attempt = int(*attempt);
  if (const char* run = get("TORCHELASTIC_RUN_ID"); run && *run) id.run_id = run;
  return id;
}

Result<Session> bootstrap(const WorkerIdentity& id, const std::string& fingerprint,
                          std::chrono::milliseconds timeout) {
  auto connected = connect_store(id, timeout);
  if (!connected) return fail(connected.error());
  Session s = std::move(connected).value();
  if (auto st = check_in(s, fingerprint); !st) return fail(st.error());
  if (auto st = await_every_rank(s, timeout); !st) return fail(st.error());
  if (auto st = compare_with_rank_0(s, timeout); !st) return fail(st.error());
  return s;
}

}  // namespace ddp::train
