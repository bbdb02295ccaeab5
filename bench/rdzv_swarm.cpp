// ddp-rdzv-swarm: nodes 1..N-1 of one step in one process, for
// bench/scale_light.py at 16,384 nodes. Each node is the agents' own
// rendezvous client (agent/rendezvous/rdzv_client.hpp: the handshake with
// the step's secret, JOIN, heartbeats, retries, STOPPED), all in one event
// loop; none starts a worker. In C++ and with the agents' own client, it
// leaves node 0 most of the machine's CPU (doc/benchmarks.md has its cost).
//
//   ddp-rdzv-swarm --nodes N --port P --run ID --t0-ns T --mode failfast|spare
//                  [--spares K] [--timeout-s S]
//
// reads the step's secret from SLURM_DDP_SECRET and prints one JSON object:
//   started_s   from T (CLOCK_MONOTONIC, node 0's spawn) to the last START
//               of attempt 0 at the simulated nodes (spares hold one too)
//   failfast_s  (failfast) node N-1 reports a worker failure: until every
//               simulated node holds its STOP
//   spare_s     (spare, K >= 1) node N-1-K's connection ends (a crash):
//               until the first spare (node N-K) holds attempt 1's START
//   swarm_cpu_s this process's CPU time
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "rendezvous/heartbeat.hpp"
#include "rendezvous/rdzv_client.hpp"

namespace {

using namespace ddp;
using namespace ddp::agent;
using Clock = std::chrono::steady_clock;

struct Options {
  std::uint32_t nodes = 0, spares = 0;
  std::uint16_t port = 0;
  std::string run_id, mode = "failfast";
  std::int64_t t0_ns = 0;
  int timeout_s = 120;
  int node0_pid = 0;  // to read node 0's CPU time when the rendezvous is done
};

// One simulated node: its client and what it has been told, by attempt.
struct SimNode {
  std::unique_ptr<RdzvClient> client;
  std::vector<std::optional<Clock::time_point>> starts, stops;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class Swarm {
 public:
  Swarm(const Options& o, std::string secret) : o_(o), secret_(std::move(secret)), nodes_(o.nodes) {}

  // Every simulated node connects at once.
  void begin() {
    for (std::uint32_t rank = 1; rank < o_.nodes; ++rank) {
      ClientConfig cfg;
      cfg.run_id = o_.run_id;
      cfg.secret = secret_;
      cfg.node_rank = rank;
      cfg.join.host = "swarm" + std::to_string(rank);
      // Each node connects from an address of its own (127.1.x.y, on
      // loopback), as nodes do: node 0's gate treats many pending connections
      // from one address as a flood. (From one address to one, the kernel's
      // search for a free local port also grows with every connection.)
      cfg.coordinator_addr = "127.0.0.1";
      cfg.source_addr = "127." + std::to_string(1 + (rank >> 16)) + "." + std::to_string((rank >> 8) & 255) + "." +
                        std::to_string(rank & 255);
      cfg.coordinator_ports = {o_.port};
      cfg.rdzv_timeout = std::chrono::seconds(o_.timeout_s);
      cfg.heartbeat_timeout = std::chrono::seconds(10);
      cfg.heartbeat_every = heartbeat_interval(o_.nodes, cfg.heartbeat_timeout);  // as the agents do
      SimNode& node = nodes_[rank];
      node.starts.resize(2);
      node.stops.resize(2);
      // The spare measured (spare mode) polls a loop of its own before each
      // turn of the swarm's: on a machine of its own it would not wait while
      // the swarm parses 16,384 STARTs (each lists every group).
      const bool measured = o_.mode == "spare" && o_.spares > 0 && rank == o_.nodes - o_.spares;
      node.client = std::make_unique<RdzvClient>(measured ? spare_loop_ : loop_, std::move(cfg), events_for(rank));
      node.client->begin();
    }
  }

  // Runs the loop until `done` or the timeout; false on the timeout.
  template <typename Done>
  bool run_until(Done done) {
    const auto until = Clock::now() + std::chrono::seconds(o_.timeout_s);
    auto next_tick = Clock::now();
    while (!done()) {
      if (Clock::now() > until) return false;
      if (!spare_loop_.run_once(std::chrono::milliseconds(0))) return false;
      if (!loop_.run_once(std::chrono::milliseconds(1))) return false;
      // The clients' retries (125-375 ms) and heartbeats (1 s or more): every 50 ms
      // is plenty (16,384 ticks each loop turn would cost more than the
      // messages).
      if (Clock::now() >= next_tick) {
        for (auto& node : nodes_)
          if (node.client) node.client->tick();
        next_tick = Clock::now() + std::chrono::milliseconds(50);
      }
    }
    return true;
  }

  // Counted as they come, not by a scan of every node after every loop
  // turn: the simulator shares its cores with node 0.
  std::size_t started(std::uint32_t attempt) const { return attempt < 2 ? starts_[attempt] : 0; }
  std::size_t stopped(std::uint32_t attempt) const { return attempt < 2 ? stops_[attempt] : 0; }
  std::optional<Clock::time_point> last_start(std::uint32_t attempt) const {
    std::optional<Clock::time_point> last;
    for (const auto& node : nodes_)
      if (node.starts.size() > attempt && node.starts[attempt] && (!last || *node.starts[attempt] > *last))
        last = node.starts[attempt];
    return last;
  }
  SimNode& node(std::uint32_t rank) { return nodes_[rank]; }
  std::size_t lost() const { return lost_; }

 private:

  RdzvClient::Events events_for(std::uint32_t rank) {
    return RdzvClient::Events{
        .on_start = [this, rank](const rdzv::Start& s) { note(nodes_[rank].starts, s.attempt, starts_); },
        .on_stop =
            [this, rank](std::uint32_t attempt) {
              note(nodes_[rank].stops, attempt, stops_);
              nodes_[rank].client->report_stopped(attempt);  // no workers to stop
            },
        .on_done = [](const Verdict&) {},
        .on_lost = [this](const std::string&) { ++lost_; },
        .on_check = [](const rdzv::Order&) {},
    };
  }
  static void note(std::vector<std::optional<Clock::time_point>>& times, std::uint32_t attempt,
                   std::size_t (&counts)[2]) {
    if (attempt < times.size() && !times[attempt]) times[attempt] = Clock::now(), ++counts[attempt];
  }

  Options o_;
  std::string secret_;
  EventLoop loop_, spare_loop_;
  std::vector<SimNode> nodes_;  // by node rank; [0] is node 0's real agent, unused
  std::size_t lost_ = 0;
  std::size_t starts_[2] = {0, 0}, stops_[2] = {0, 0};  // nodes that hold attempt 0's, 1's
};

double since_t0(Clock::time_point at, std::int64_t t0_ns) {
  return double(at.time_since_epoch().count() - t0_ns) / 1e9;  // steady_clock is CLOCK_MONOTONIC
}

double cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Another process's CPU time (user + system) so far, from /proc/PID/stat: node
// 0's for the rendezvous alone, which on a machine of its own (the simulated
// nodes elsewhere) would bound the rendezvous' time.
double process_cpu_seconds(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return -1;
  char buf[1024] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const char* after_name = std::strrchr(buf, ')');  // the command name may hold spaces
  unsigned long utime = 0, stime = 0;
  if (n == 0 || !after_name ||
      std::sscanf(after_name + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
    return -1;
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

int fail(const std::string& what, const Swarm& swarm) {
  std::fprintf(stderr, "ddp-rdzv-swarm: %s (%zu node(s) lost the rendezvous)\n", what.c_str(), swarm.lost());
  return 1;
}

// Where a spare's time went (seconds from the crash): the first and the last
// node to hold STOP, the first to hold attempt 1's START.
std::string phases(Swarm& swarm, std::uint32_t nodes, Clock::time_point t1) {
  std::optional<Clock::time_point> first_stop, last_stop, first_start;
  for (std::uint32_t r = 1; r < nodes; ++r) {
    const auto& n = swarm.node(r);
    if (n.stops[0] && (!first_stop || *n.stops[0] < *first_stop)) first_stop = n.stops[0];
    if (n.stops[0] && (!last_stop || *n.stops[0] > *last_stop)) last_stop = n.stops[0];
    if (n.starts[1] && (!first_start || *n.starts[1] < *first_start)) first_start = n.starts[1];
  }
  const auto at = [&](const std::optional<Clock::time_point>& t) {
    return t ? std::to_string(seconds(*t - t1)) : "null";
  };
  return ", \"stop_first_s\": " + at(first_stop) + ", \"stop_all_s\": " + at(last_stop) +
         ", \"start1_first_s\": " + at(first_start);
}

int run(const Options& o, const std::string& secret) {
  Swarm swarm(o, secret);
  // Every node holds attempt 0's START, spares too (theirs names no group of theirs: they wait).
  const std::size_t all = o.nodes - 1;
  swarm.begin();
  if (!swarm.run_until([&] { return swarm.started(0) == all; }))
    return fail(std::to_string(swarm.started(0)) + " of " + std::to_string(all) + " nodes had START", swarm);
  std::string out = "{\"started_s\": " + std::to_string(since_t0(*swarm.last_start(0), o.t0_ns));
  if (o.node0_pid > 0) out += ", \"node0_rdzv_cpu_s\": " + std::to_string(process_cpu_seconds(o.node0_pid));
  if (o.mode == "failfast") {
    Failure f;
    f.attempt = 0;
    f.node = o.nodes - 1;
    f.rank = o.nodes - 1;
    f.local_rank = 0;
    f.time = "00:00:00";
    const auto t1 = Clock::now();
    swarm.node(o.nodes - 1).client->report_failure(f);
    if (!swarm.run_until([&] { return swarm.stopped(0) == o.nodes - 1; })) return fail("not every node stopped", swarm);
    Clock::time_point last = t1;
    for (std::uint32_t r = 1; r < o.nodes; ++r) last = std::max(last, *swarm.node(r).stops[0]);
    out += ", \"failfast_s\": " + std::to_string(seconds(last - t1));
  } else {
    const std::uint32_t victim = o.nodes - 1 - o.spares, spare = o.nodes - o.spares;
    const auto t1 = Clock::now();
    swarm.node(victim).client.reset();  // its connection ends, as a crashed node's does
    if (!swarm.run_until([&] { return swarm.node(spare).starts[1].has_value(); }))
      return fail("the spare was never started", swarm);
    out += ", \"spare_s\": " + std::to_string(seconds(*swarm.node(spare).starts[1] - t1));
    out += phases(swarm, o.nodes, t1);
  }
  std::printf("%s, \"swarm_cpu_s\": %.2f}\n", out.c_str(), cpu_seconds());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"nodes 1..N-1 of a step as rendezvous clients in one process (bench/scale_light.py)"};
  app.add_option("--nodes", o.nodes, "nodes in the step, node 0 included")->required()->check(CLI::Range(3, 65536));
  app.add_option("--port", o.port, "node 0's rendezvous port")->required();
  app.add_option("--run", o.run_id, "the step's run id")->required();
  app.add_option("--t0-ns", o.t0_ns, "node 0's spawn, CLOCK_MONOTONIC ns")->required();
  app.add_option("--mode", o.mode)->check(CLI::IsMember({"failfast", "spare"}));
  app.add_option("--spares", o.spares)->check(CLI::Range(0, 16));
  app.add_option("--timeout-s", o.timeout_s);
  app.add_option("--node0-pid", o.node0_pid, "node 0's agent: its CPU time at the rendezvous' end is reported");
  CLI11_PARSE(app, argc, argv);
  const char* secret = std::getenv("SLURM_DDP_SECRET");
  if (!secret || !*secret) {
    std::fprintf(stderr, "ddp-rdzv-swarm: SLURM_DDP_SECRET is not set: the step's secret, as node 0 has it\n");
    return 2;
  }
  if (o.mode == "spare" && o.spares == 0) {
    std::fprintf(stderr, "ddp-rdzv-swarm: --mode spare needs --spares 1 or more\n");
    return 2;
  }
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
  return run(o, secret);
}
