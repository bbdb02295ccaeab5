// Bootstrap pieces of ddp-train: the worker identity read from torchrun's
// variables, the rank-0 store over real sockets on loopback, the missing-rank
// message, snapshots (encode, decode, truncation, corruption, newest-valid
// selection, pruning) and the metrics JSON.
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "process_group/bootstrap.hpp"
#include "process_group/gpu_claims.hpp"
#include "process_group/store.hpp"
#include "train/metrics.hpp"
#include "train/snapshot.hpp"
#include "suites.hpp"

using namespace ddp::train;
using namespace std::chrono_literals;

namespace {

ddp::Result<WorkerIdentity> identity(std::map<std::string, std::string> env) {
  return read_worker_identity([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string temp_dir() {
  char tmpl[] = "/tmp/ddp-unit-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(tmpl));
  return tmpl;
}

Snapshot sample_snapshot(int step) {
  Snapshot s;
  s.meta = {{"model", "mlp 4-2 (cross-entropy)"}, {"global_step", std::to_string(step)}};
  s.arrays = {{"parameters", {1.0f, 2.0f, float(step)}}, {"sgd_velocity", {0.5f, -0.5f, 0.0f}}};
  return s;
}

}  // namespace

START_TEST(identity_from_torchrun_variables) {
  auto alone = identity({});
  ck_assert(alone.ok() && alone->standalone() && alone->world_size == 1);
  auto id = identity({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                      {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RESTART_COUNT", "2"},
                      {"TORCHELASTIC_RUN_ID", "job-7"}});
  ck_assert(id.ok());
  ck_assert_int_eq(id->rank, 3);
  ck_assert_int_eq(id->local_rank, 1);
  ck_assert_int_eq(id->attempt, 2);
  CK_STR_EQ(id->run_id, "job-7");
  CK_STR_EQ(store_key(id->run_id, id->attempt, "nccl"), "job-7/2/nccl");
  // Each broken contract names the variable.
  CK_CONTAINS(identity({{"RANK", "4"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).error(),
              "RANK=4");
  CK_CONTAINS(identity({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).error(), "MASTER_PORT");
  CK_CONTAINS(identity({{"RANK", "0"}, {"WORLD_SIZE", "x"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).error(),
              "WORLD_SIZE=x");
  CK_CONTAINS(identity({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"},
                        {"TORCHELASTIC_USE_AGENT_STORE", "True"}})
                  .error(),
              "--rdzv_backend=c10d");
}
END_TEST

START_TEST(rank_ranges_compress) {
  CK_STR_EQ(rank_ranges({0, 1, 2, 3, 7, 9, 10}), "0-3,7,9-10");
  CK_STR_EQ(rank_ranges({5}), "5");
  CK_STR_EQ(rank_ranges({}), "");
}
END_TEST

START_TEST(store_set_get_wait_over_loopback) {
  auto server = StoreServer::listen(0);
  ck_assert_msg(server.ok(), "%s", server.ok() ? "" : server.error().c_str());
  const std::uint16_t port = (*server)->port();
  auto a = StoreClient::connect("127.0.0.1", port, 2s);
  auto b = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(a.ok() && b.ok());
  Bytes id(128);
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = char(i);  // binary values, NUL bytes included
  // b waits for a key that a sets later, from another thread.
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    (void)(*a)->set("run/0/nccl", id);
  });
  auto got = (*b)->get("run/0/nccl", 5s);
  writer.join();
  ck_assert(got.ok());
  ck_assert(*got == id);
  // wait() names what is missing when it times out.
  auto st = (*b)->wait({"run/0/nccl", "run/0/arrived/3"}, 100ms);
  ck_assert(!st.ok());
  CK_CONTAINS(st.error(), "run/0/arrived/3");
  ck_assert(st.error().find("nccl") == std::string::npos);
}
END_TEST

START_TEST(store_survives_garbage_and_oversized_frames) {
  auto server = StoreServer::listen(0);
  ck_assert(server.ok());
  const std::uint16_t port = (*server)->port();
  // A stranger sends an oversized key length: only that connection closes.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const char bad[] = {1, char(0xff), char(0xff), char(0xff), char(0x7f)};
  ck_assert_int_eq(::send(fd, bad, sizeof bad, 0), long(sizeof bad));
  char c;
  ck_assert_int_eq(::recv(fd, &c, 1, 0), 0);  // closed by the server
  ::close(fd);
  auto client = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(client.ok());
  ck_assert((*client)->set("k", Bytes{'v'}).ok());
  ck_assert((*client)->get("k", 1s).ok());
}
END_TEST

START_TEST(store_limits_connections) {
  // Two clients at most: a third is closed on arrival, the first two work.
  auto server = StoreServer::listen(0, 2);
  ck_assert(server.ok());
  const std::uint16_t port = (*server)->port();
  auto a = StoreClient::connect("127.0.0.1", port, 2s);
  auto b = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(a.ok() && b.ok());
  ck_assert((*a)->set("k", Bytes(3 << 20, 'x')).ok());
  auto c = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(c.ok());  // the kernel accepted it; the server closes it
  ck_assert(!(*c)->get("k", 1s).ok());
  ck_assert((*b)->get("k", 1s).ok());
}
END_TEST

// Out of descriptors the store rests its listening socket instead of
// spinning on it (level-triggered, a connection it cannot accept would wake
// it for ever), and serves its clients meanwhile.
START_TEST(store_out_of_descriptors_does_not_spin) {
  auto server = StoreServer::listen(0);
  ck_assert(server.ok());
  const std::uint16_t port = (*server)->port();
  auto a = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(a.ok() && (*a)->set("j", Bytes(1, 'y')).ok());  // accepted by the store before its limit
  const int waiting = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  rlimit saved{};
  ck_assert_int_eq(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::vector<int> held;  // every descriptor up to a low limit in use
  for (int fd; held.size() < 64 && (fd = ::dup(0)) >= 0;) held.push_back(fd);
  rlimit low = saved;
  low.rlim_cur = rlim_t(held.back() + 1);
  ck_assert_int_eq(::setrlimit(RLIMIT_NOFILE, &low), 0);
  for (int fd; (fd = ::dup(0)) >= 0;) held.push_back(fd);  // the holes below it too
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(::connect(waiting, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);  // the store cannot accept it
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  std::this_thread::sleep_for(500ms);
  ::getrusage(RUSAGE_SELF, &after);
  const auto cpu_ms = [](const rusage& r) {
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1000;
  };
  const long spent = cpu_ms(after) - cpu_ms(before);
  const auto served = (*a)->set("k", Bytes(3, 'x'));  // still served
  for (const int fd : held) ::close(fd);
  ::close(waiting);
  ck_assert_int_eq(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  ck_assert_msg(served.ok(), "%s", served.ok() ? "" : served.error().c_str());
  ck_assert_msg(spent < 250, "the store spent %ld ms of CPU in 500 ms with a connection it cannot accept", spent);
}
END_TEST

START_TEST(store_drops_a_client_that_stops_reading) {
  auto server = StoreServer::listen(0);
  ck_assert(server.ok());
  const std::uint16_t port = (*server)->port();
  auto rank = StoreClient::connect("127.0.0.1", port, 2s);
  ck_assert(rank.ok());
  ck_assert((*rank)->set("k", Bytes(3 << 20, 'x')).ok());
  // A stranger asks for the 3 MiB value again and again and never reads: the
  // server must drop it (after 5 s without progress), not stall for everyone:
  // a blocking send would stall the store for good and this get would fail.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  ck_assert_int_eq(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const char get[] = {2, 1, 0, 0, 0, 'k', 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(::send(fd, get, sizeof get, 0), long(sizeof get));
  std::this_thread::sleep_for(300ms);  // the server is busy with the stranger before the rank asks
  const auto value = (*rank)->get("k", 30s);
  ck_assert_msg(value.ok(), "%s", value.ok() ? "" : value.error().c_str());
  ck_assert_uint_eq(value->size(), 3u << 20);
  ::close(fd);
}
END_TEST

START_TEST(store_connect_names_the_endpoint_on_timeout) {
  auto server = StoreServer::listen(0);  // find a free port, then free it
  const std::uint16_t port = (*server)->port();
  std::move(server).value().reset();
  auto client = StoreClient::connect("127.0.0.1", port, 300ms);
  ck_assert(!client.ok());
  CK_CONTAINS(client.error(), "127.0.0.1:" + std::to_string(port));
  CK_CONTAINS(client.error(), "is rank 0 running");
}
END_TEST

START_TEST(bootstrap_names_ranks_that_never_arrive) {
  WorkerIdentity id;
  id.rank = 0;
  id.world_size = 4;
  id.master_addr = "127.0.0.1";
  id.master_port = 0;  // any free port: nobody else will find it, which is the point
  auto s = bootstrap(id, "model", 300ms);
  ck_assert(!s.ok());
  CK_CONTAINS(s.error(), "ranks 1-3 of 4 did not arrive");
}
END_TEST

START_TEST(snapshot_round_trip_and_damage) {
  const Snapshot s = sample_snapshot(42);
  const auto bytes = encode_snapshot(s);
  auto back = decode_snapshot(bytes, "f");
  ck_assert(back.ok());
  ck_assert(back->meta == s.meta);
  ck_assert(back->arrays == s.arrays);
  ck_assert_int_eq(back->format, 2);
  // Truncated anywhere: refused, naming how much is there.
  for (std::size_t keep : {std::size_t(0), std::size_t(10), bytes.size() / 2, bytes.size() - 1}) {
    auto cut = decode_snapshot(std::vector<char>(bytes.begin(), bytes.begin() + long(keep)), "f");
    ck_assert(!cut.ok());
  }
  CK_CONTAINS(decode_snapshot(std::vector<char>(bytes.begin(), bytes.end() - 5), "f").error(), "truncated");
  // One flipped bit in the payload: the checksum catches it.
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  CK_CONTAINS(decode_snapshot(flipped, "f").error(), "checksum");
}
END_TEST

// A link planted at the temporary's name (a shared folder): the snapshot is
// written beside it, the link's target is never touched.
START_TEST(a_link_at_the_temporary_name_is_not_followed) {
  const std::string dir = temp_dir(), elsewhere = temp_dir();
  const std::string victim = elsewhere + "/victim";
  { std::ofstream(victim) << "precious"; }
  const std::string name = snapshot_file_name(7);
  ck_assert_int_eq(::symlink(victim.c_str(), (dir + "/." + name + ".tmp").c_str()), 0);
  ck_assert(write_file_durably(dir, name, encode_snapshot(sample_snapshot(7))).ok());
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  CK_STR_EQ(text, "precious");
  ck_assert(find_newest_snapshot(dir)->newest);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(elsewhere);
}
END_TEST

START_TEST(newest_valid_snapshot_wins_and_pruning_keeps_k) {
  const std::string dir = temp_dir();
  for (int step : {10, 20, 30}) ck_assert(write_file_durably(dir, snapshot_file_name(step), encode_snapshot(sample_snapshot(step))).ok());
  // Damage the newest: truncate it as a crash mid-copy would.
  const std::string newest = dir + "/" + snapshot_file_name(30);
  ck_assert_int_eq(::truncate(newest.c_str(), 20), 0);
  auto scan = find_newest_snapshot(dir);
  ck_assert(scan.ok() && scan->newest);
  CK_STR_EQ(scan->newest->snapshot.meta.at("global_step"), "20");
  ck_assert_uint_eq(scan->warnings.size(), 1);
  CK_CONTAINS(scan->warnings[0], snapshot_file_name(30));
  CK_CONTAINS(scan->warnings[0], "truncated");
  // A stale temporary from a writer killed mid-write is ignored and pruned.
  { std::ofstream(dir + "/." + snapshot_file_name(40) + ".tmp") << "partial"; }
  ck_assert(find_newest_snapshot(dir)->newest->path.find(snapshot_file_name(20)) != std::string::npos);
  ck_assert(prune_snapshots(dir, 2).ok());
  struct stat st {};
  ck_assert_int_ne(::stat((dir + "/" + snapshot_file_name(10)).c_str(), &st), 0);
  ck_assert_int_eq(::stat((dir + "/" + snapshot_file_name(20)).c_str(), &st), 0);
  ck_assert_int_ne(::stat((dir + "/." + snapshot_file_name(40) + ".tmp").c_str(), &st), 0);
  // A directory that does not exist yet simply has no snapshots.
  auto none = find_newest_snapshot(dir + "/missing");
  ck_assert(none.ok() && !none->newest);
  (void)!std::system(("rm -rf " + dir).c_str());
}
END_TEST

START_TEST(metrics_lines_are_json) {
  const std::string line = JsonLine()
                               .add("event", std::string("final"))
                               .add("world_size", 4LL)
                               .add("loss", 0.25)
                               .add("nan", std::nan(""))
                               .add("note", std::string("a \"quoted\"\nline\x01"))
                               .add("lr", double(0.1f))
                               .add("tokens", 2048.0)
                               .str();
  // 9 significant digits; a whole double keeps its ".0"; \n as JSON's short escape.
  CK_STR_EQ(line,
            "{\"event\":\"final\",\"world_size\":4,\"loss\":0.25,\"nan\":null,\"note\":\"a \\\"quoted\\\"\\nline\\u0001\","
            "\"lr\":0.100000001,\"tokens\":2048.0}");
  const auto back = ddp::json_parsed(line);
  ck_assert(back && (*back)["note"] == "a \"quoted\"\nline\x01");
}
END_TEST

START_TEST(gpu_claims_refuse_two_ranks_on_one_gpu_of_one_nccl_host) {
  const std::string node = node_identity("gpu-n1", "5f1c");
  CK_STR_EQ(node, "gpu-n1/5f1c");
  CK_STR_EQ(nccl_host_identity(nullptr, node), node);
  CK_STR_EQ(nccl_host_identity("", node), node);
  CK_STR_EQ(nccl_host_identity("kit-1", node), "NCCL_HOSTID=kit-1");
  // Round trip through the store's bytes; malformed claims are named.
  const GpuClaim a{0, node, "0000:18:00.0", "0"};
  auto back = decode_gpu_claim(0, encode_gpu_claim(a));
  ck_assert(back.ok());
  CK_STR_EQ(back->nccl_host, node);
  CK_STR_EQ(back->bus_id, "0000:18:00.0");
  CK_STR_EQ(back->visible, "0");
  const std::string junk = "no newline";
  auto bad = decode_gpu_claim(3, Bytes(junk.begin(), junk.end()));
  ck_assert(!bad.ok());
  CK_CONTAINS(bad.error(), "local rank 3");
  // One GPU each: fine, in any order.
  const GpuClaim b{1, node, "0000:98:00.0", "1"};
  ck_assert(check_gpu_claims({b, a}).ok());
  // Both ranks see only GPU 0 of the node (CUDA_VISIBLE_DEVICES=0 twice):
  // refused before NCCL, naming both ranks, the GPU and the fixes.
  const GpuClaim c{3, node, "0000:18:00.0", "0"};
  auto dup = check_gpu_claims({a, b, c});
  ck_assert(!dup.ok());
  CK_CONTAINS(dup.error(), "local ranks 0 and 3");
  CK_CONTAINS(dup.error(), "0000:18:00.0");
  CK_CONTAINS(dup.error(), "Duplicate GPU");
  CK_CONTAINS(dup.error(), "one worker per GPU");
  CK_CONTAINS(dup.error(), "NCCL_HOSTID");
  // The same GPU under two NCCL hosts is what NCCL accepts (the GPU kit's
  // two ranks on one GPU).
  const GpuClaim d{1, nccl_host_identity("kit-1", node), "0000:18:00.0", "0"};
  const GpuClaim e{0, nccl_host_identity("kit-0", node), "0000:18:00.0", "0"};
  ck_assert(check_gpu_claims({d, e}).ok());
}
END_TEST

Suite* trainer_dist_suite() {
  return make_suite("trainer_dist",
                    {identity_from_torchrun_variables, rank_ranges_compress, store_set_get_wait_over_loopback,
                     store_survives_garbage_and_oversized_frames,
                     store_limits_connections, store_out_of_descriptors_does_not_spin, store_drops_a_client_that_stops_reading,
                     store_connect_names_the_endpoint_on_timeout,
                     bootstrap_names_ranks_that_never_arrive, snapshot_round_trip_and_damage,
                     newest_valid_snapshot_wins_and_pruning_keeps_k, a_link_at_the_temporary_name_is_not_followed,
                     metrics_lines_are_json,
                     gpu_claims_refuse_two_ranks_on_one_gpu_of_one_nccl_host},
                    60);  // the store drops a silent reader after 5 s
}
