// A small TCP key-value store for bootstrap, hosted by worker rank 0 on
// MASTER_PORT (where a PyTorch worker hosts its TCPStore). Ranks exchange
// their addresses (Gloo), the NCCL unique id and model shapes through it.
//
// Wire format, both directions: frames of [u8 op][u32 key length][key]
// [u32 value length][value], lengths little-endian. Ops: SET (reply OK),
// GET (reply VALUE or MISSING: the client polls, so a waiting client never
// holds the server). Limits guard the port: keys up to 1 KiB, values up to
// 4 MiB, 256 MiB in all, the world size plus a margin of connections; a
// connection breaking them is closed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

using Bytes = std::vector<char>;

// Serves until destroyed, on a thread of its own.
class StoreServer {
 public:
  // `max_clients` connections at once; one more is closed on arrival. Every
  // rank keeps its connection for the run: the bootstrap passes the world size
  // plus a margin.
  static Result<std::unique_ptr<StoreServer>> listen(std::uint16_t port, std::size_t max_clients = 1024);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;
  std::uint16_t port() const;

  struct Impl;

 private:
  explicit StoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class StoreClient {
 public:
  // Retries until `timeout`: rank 0 may start its server after we start.
  static Result<std::unique_ptr<StoreClient>> connect(const std::string& host, std::uint16_t port,
                                                      std::chrono::milliseconds timeout);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  Status set(const std::string& key, const Bytes& value);
  // Waits up to `timeout` for the key to appear: its value, or an error
  // naming the key and the store (never a "missing" value).
  Result<Bytes> get(const std::string& key, std::chrono::milliseconds timeout);
  // Waits for every key; on timeout the error lists the keys still missing.
  Status wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  // Which of `keys` are absent right now.
  Result<std::vector<std::string>> missing(const std::vector<std::string>& keys);

  const std::string& endpoint() const { return endpoint_; }

 private:
  StoreClient(int fd, std::string endpoint) : fd_(fd), endpoint_(std::move(endpoint)) {}
  Result<Bytes> request(std::uint8_t op, const std::string& key, const Bytes& value, std::uint8_t* reply_op);
  int fd_;
  std::string endpoint_;
};

// Keys of one run attempt: "<run id>/<attempt>/<name>", so a key an earlier
// attempt left behind is never read by a later one.
std::string store_key(const std::string& run_id, int attempt, const std::string& name);

}  // namespace ddp::train
