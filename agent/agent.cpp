#include "agent.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>

#include "ddp/affinity.hpp"
#include "ddp/netif.hpp"
#include "ddp/worker_env.hpp"
#include "worker_group.hpp"

namespace ddp::agent {

namespace {

enum class State { Rendezvous, Start, Monitor, Stop, Restart, Done };

// Signals the agent handles itself (through a signalfd) instead of dying:
// terminating ones end the run, USR1/USR2 (preemption warnings from
// `sbatch --signal`) are forwarded while the run goes on.
constexpr int kTerminating[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
constexpr int kForwarded[] = {SIGUSR1, SIGUSR2};

class SignalFd {
 public:
  SignalFd() {
    sigemptyset(&handled_);
    sigaddset(&handled_, SIGCHLD);
    for (int s : kTerminating) sigaddset(&handled_, s);
    for (int s : kForwarded) sigaddset(&handled_, s);
    sigprocmask(SIG_BLOCK, &handled_, &previous_);
    fd_ = signalfd(-1, &handled_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalFd() {
    if (fd_ >= 0) close(fd_);
    sigprocmask(SIG_SETMASK, &previous_, nullptr);
  }
  int fd() const { return fd_; }
  const sigset_t& previous_mask() const { return previous_; }

  // Waits up to `timeout` for a signal; returns it, or 0.
  int wait(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, int(timeout.count())) <= 0) return 0;
    signalfd_siginfo info{};
    if (read(fd_, &info, sizeof info) != sizeof info) return 0;
    return int(info.ssi_signo);
  }

 private:
  sigset_t handled_{};
  sigset_t previous_{};
  int fd_ = -1;
};

bool contains(const int (&set)[4], int sig) {
  for (int s : set)
    if (s == sig) return true;
  return false;
}

std::string local_time(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

std::uint16_t free_port(const std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  socklen_t len = sizeof addr;
  std::uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

int run_agent(AgentConfig config) {
  NodePlan& plan = config.plan;
  SignalFd signals;
  if (signals.fd() < 0) {
    spdlog::error("cannot create a signalfd: {}", std::strerror(errno));
    return 1;
  }
  const Environment base = Environment::from_envp(environ);
  const std::string node = std::to_string(plan.node_rank) + " (" + host_name() + ")";

  std::string ifname;
  if (const auto route = route_to(plan.master_addr); route) {
    ifname = route->interface;
  } else {
    spdlog::warn("cannot tell which interface reaches MASTER_ADDR={}: {}; Gloo/NCCL will pick one themselves",
                 plan.master_addr, route.error());
  }

  State state = State::Rendezvous;
  std::uint32_t attempt = 0;
  std::optional<WorkerExit> failure;
  int stop_signal = 0;
  WorkerGroup group;

  while (state != State::Done) {
    switch (state) {
      case State::Rendezvous:
        // Ranks and MASTER_* come from the plan; nothing to exchange yet.
        state = State::Start;
        break;

      case State::Start: {
        std::vector<Environment> envs;
        for (std::uint32_t local = 0; local < plan.nproc; ++local)
          envs.push_back(worker_environment(base, plan, {local, attempt}, ifname));
        std::vector<std::optional<cpu_set_t>> masks(plan.nproc);
        for (std::size_t i = 0; i < plan.placements.size() && i < masks.size(); ++i) {
          if (plan.placements[i].cpus.empty()) continue;
          auto mask = cpu_mask(plan.placements[i].cpus);
          if (mask) masks[i] = *mask;
          else spdlog::warn("node {}: worker {} left unbound: {}", node, i, mask.error());
        }
        if (plan.verbose)
          spdlog::info("node {}: starting {} worker(s), ranks {}..{} of {}, MASTER_ADDR={} MASTER_PORT={}{}", node,
                       plan.nproc, plan.rank_base, plan.rank_base + plan.nproc - 1, plan.world_size, plan.master_addr,
                       plan.master_port, ifname.empty() ? "" : ", interface " + ifname);
        if (auto started = group.start(config.command, envs, masks, signals.previous_mask()); !started) {
          spdlog::error("node {}: {}", node, started.error());
          return 1;
        }
        state = State::Monitor;
        break;
      }

      case State::Monitor: {
        const int sig = signals.wait(std::chrono::milliseconds(1000));
        if (sig != 0 && sig != SIGCHLD) {
          group.signal_all(sig);
          if (contains(kTerminating, sig)) {
            spdlog::warn("node {}: received {}, stopping the workers", node, signal_name(sig));
            stop_signal = sig;
            state = State::Stop;
            break;
          }
        }
        for (const auto& exit : group.reap())
          if (exit.failed() && !failure) {
            failure = exit;
            state = State::Stop;
          }
        if (state == State::Monitor && group.running() == 0) state = State::Done;
        break;
      }

      case State::Stop:
        group.stop(config.grace);
        if (failure) {
          const auto rank = plan.rank_base + failure->local_rank;
          spdlog::error("root cause: worker rank {} (local rank {}) on node {} {} at {}", rank, failure->local_rank,
                        node, failure->describe(), local_time(failure->when));
        }
        state = (failure && !stop_signal && attempt < plan.max_restarts) ? State::Restart : State::Done;
        break;

      case State::Restart:
        ++attempt;
        if (config.standalone) plan.master_port = free_port(plan.master_addr);
        spdlog::warn("node {}: restarting all workers, attempt {} of {}", node, attempt, plan.max_restarts);
        failure.reset();
        state = State::Start;
        break;

      case State::Done:
        break;
    }
  }
  if (stop_signal) return 128 + stop_signal;
  return failure ? failure->status_code() : 0;
}

}  // namespace ddp::agent
