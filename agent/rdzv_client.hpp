// An agent's side of the rendezvous: connects to the coordinator on node 0
// (retrying until the rendezvous timeout), proves the step's secret and checks
// the coordinator's proof, joins, then relays orders (START, STOP, DONE) to the
// agent and the agent's reports (FAIL, STOPPED, FINISHED) to the coordinator,
// with heartbeats both ways.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"
#include "ddp/wire/placement.hpp"
#include "event_loop.hpp"

namespace ddp::agent {

struct ClientConfig {
  std::string run_id;
  std::string secret;
  std::uint32_t node_rank = 0;
  std::uint32_t nproc = 1;
  std::vector<WorkerPlacement> workers;  // this node's placements (for node 0's verbose summary)
  std::string host;
  std::string coordinator_addr;  // node 0's address (MASTER_ADDR)
  std::uint16_t coordinator_port = 0;
  std::chrono::milliseconds rdzv_timeout{60000};
  std::chrono::milliseconds heartbeat_timeout{5000};
};

struct StartOrder {
  std::uint32_t attempt = 0;
  std::string master_addr;
  std::uint16_t master_port = 0;
  // By group rank (roster.hpp): the node that runs the group, and its workers.
  std::vector<std::uint32_t> group_nodes;
  std::vector<std::uint32_t> group_workers;
};

struct FailureReport {
  std::uint32_t attempt = 0;
  std::uint32_t rank = 0, local_rank = 0;
  int code = 1;            // the worker's exit status as a shell shows it
  std::string what;        // "exited with code 3" / "was killed by SIGKILL"
  std::string time;        // local HH:MM:SS
  std::string tail;        // last lines of its stderr
  std::string error_file;  // TORCHELASTIC_ERROR_FILE, if the worker wrote it
  // A hang (--ddp-hang-timeout): the culprit's last progress, ms since the
  // epoch (0: not a hang), where it stalled (StalledIn), the node's stalled ranks.
  std::uint64_t stalled_since_ms = 0;
  std::uint32_t stalled_in = 0;
  std::optional<std::uint64_t> stalled_step;  // the step its progress file names, if any
  std::string stalled;
};

class RdzvClient {
 public:
  struct Events {
    std::function<void(const StartOrder&)> on_start;
    std::function<void(std::uint32_t attempt)> on_stop;
    // DONE (or ABORT): the job's verdict; `cause` empty on success.
    std::function<void(int code, const std::string& cause)> on_done;
    // The coordinator cannot be reached or went silent: the message says what was tried.
    std::function<void(const std::string& why)> on_lost;
  };

  RdzvClient(EventLoop& loop, ClientConfig config, Events events);
  ~RdzvClient();
  RdzvClient(const RdzvClient&) = delete;
  RdzvClient& operator=(const RdzvClient&) = delete;

  void begin();
  void tick();  // retries, heartbeats, timeouts; from the loop's top level
  void report_failure(const FailureReport& report);
  // The hang watch fired here; the report (a FAIL) follows with the stacks.
  void report_hanging(std::uint32_t attempt);
  // `unhealthy`: the site's health check failed here after a worker failure,
  // and what it said; the coordinator then takes this node out of the step.
  void report_stopped(std::uint32_t attempt, const std::string& unhealthy = "");
  void report_finished(std::uint32_t attempt);

 private:
  using Clock = std::chrono::steady_clock;
  void try_connect();
  void on_connected(std::uint32_t events);
  void on_message(const rdzv::Message& m);
  void on_challenge(const rdzv::Message& m);
  void on_welcome(const rdzv::Message& m);
  void on_start_order(const rdzv::Message& m);
  void on_close(const std::string& why);
  void lost(const std::string& why);
  void send(const rdzv::Message& m);

  EventLoop& loop_;
  ClientConfig config_;
  Events events_;
  int connecting_fd_ = -1;
  std::unique_ptr<Connection> conn_;
  std::vector<std::unique_ptr<Connection>> graveyard_;
  std::string client_nonce_, server_nonce_;
  bool welcomed_ = false, done_ = false;
  Clock::time_point deadline_, next_try_, last_seen_, last_heartbeat_;
  int tries_ = 0;
  std::string last_error_ = "not tried yet";
};

}  // namespace ddp::agent
