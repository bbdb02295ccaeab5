// The agent's state machine with real processes (sh), no Slurm; the
// rendezvous coordinator and client under attack, over real loopback sockets.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <list>
#include <sstream>

#include "node/agent.hpp"
#include "ddp/node/netif.hpp"
#include "ddp/wire/failure.hpp"
#include "ddp/wire/rdzv_messages.hpp"
#include "ddp/wire/rdzv_protocol.hpp"
#include "job/coordinator.hpp"
#include "job/failure_text.hpp"
#include "node/duties/command.hpp"
#include "node/duties/hang_rule.hpp"
#include "slurm/requeue.hpp"
#include "rendezvous/heartbeat.hpp"
#include "rendezvous/pending_index.hpp"
#include "rendezvous/rdzv_client.hpp"
#include "suites.hpp"

using namespace ddp;
using ddp::agent::describe;
using ddp::agent::rank_list;
using ddp::agent::what_happened;
namespace fs = std::filesystem;

namespace {

agent::AgentSpec config(std::uint32_t nproc, std::string script, std::uint32_t restarts = 0) {
  agent::AgentSpec c;
  c.plan.run_id = "unit";
  c.plan.nproc = c.plan.world_size = nproc;
  c.plan.master_addr = "127.0.0.1";
  c.plan.master_port = ddp::free_port("127.0.0.1");
  c.plan.max_restarts = restarts;
  c.command = {"/bin/sh", "-c", std::move(script)};
  c.grace = std::chrono::milliseconds(2000);
  c.standalone = true;
  c.secret = rdzv::random_hex(32);
  return c;
}

std::string scratch() {
  char tmpl[] = "/tmp/ddp-agent-test-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  ck_assert_ptr_nonnull(dir);
  setenv("T", dir, 1);  // the workers inherit the agent's environment
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void quiet() { spdlog::set_level(getenv("DDP_TEST_VERBOSE") ? spdlog::level::info : spdlog::level::off); }

// The log (info and up, one line per message) in a string while it lives;
// text() ends the capture: the logger before it back, quiet.
class CapturedLog {
 public:
  CapturedLog() : saved_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::info);
  }
  ~CapturedLog() { end(); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() {
    end();
    return log_.str();
  }

 private:
  void end() {
    if (!saved_) return;
    spdlog::set_default_logger(std::exchange(saved_, nullptr));
    quiet();
  }
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> saved_;
};

// Runs an agent with its log captured: the exit code and every line.
std::pair<int, std::string> run_logged(agent::AgentSpec c) {
  CapturedLog log;
  const int rc = agent::run_agent(std::move(c));
  return {rc, log.text()};
}

// An agent whose workers run `script` under --hang-timeout, its log captured.
std::pair<int, std::string> run_watched(std::uint32_t nproc, std::string script, std::uint32_t timeout_ms) {
  auto c = config(nproc, std::move(script));
  c.plan.hang_timeout_ms = timeout_ms;
  return run_logged(c);
}

// The first line of a hang's failure, as the root cause words it.
std::string hung_text(const agent::Hang& hang, std::chrono::milliseconds timeout) {
  Failure f;
  f.kind = FailureKind::Hung;
  f.hang = agent::hang_facts(hang, 0, StalledIn::unknown, 0, timeout, false);
  return what_happened(f);
}

}  // namespace

START_TEST(all_workers_succeed_with_their_ranks) {
  quiet();
  const auto dir = scratch();
  const int rc =
      agent::run_agent(config(3, "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR > $T/w$RANK"));
  ck_assert_int_eq(rc, 0);
  for (int r = 0; r < 3; ++r)
    CK_STR_EQ(slurp(fs::path(dir) / ("w" + std::to_string(r))),
              std::to_string(r) + " " + std::to_string(r) + " 3 3 127.0.0.1\n");
  fs::remove_all(dir);
}
END_TEST

START_TEST(one_failure_stops_the_others_and_sets_the_exit_code) {
  quiet();
  const auto dir = scratch();
  // Rank 1 fails at once; the others would sleep for a minute unless stopped
  // (the test case's timeout is far below that).
  const int rc = agent::run_agent(config(3, "[ $RANK = 1 ] && exit 7; exec sleep 60"));
  ck_assert_int_eq(rc, 7);
  fs::remove_all(dir);
}
END_TEST

START_TEST(a_worker_killed_by_a_signal_gives_128_plus_signal) {
  quiet();
  ck_assert_int_eq(agent::run_agent(config(2, "[ $RANK = 0 ] && kill -KILL $$; exec sleep 60")), 128 + 9);
}
END_TEST

START_TEST(restarts_run_a_new_attempt_with_the_count) {
  quiet();
  const auto dir = scratch();
  // Fails on attempt 0, succeeds on attempt 1; records each attempt's port.
  // One worker: with more, the failure may stop the others before they write.
  const auto script = "echo $MASTER_PORT >> $T/ports.$RANK; [ $TORCHELASTIC_RESTART_COUNT -ge 1 ] || exit 5";
  ck_assert_int_eq(agent::run_agent(config(1, script, 1)), 0);
  std::istringstream ports(slurp(fs::path(dir) / "ports.0"));
  std::string first, second;
  ports >> first >> second;
  ck_assert(!second.empty());
  ck_assert_str_ne(first.c_str(), second.c_str());                // a fresh MASTER_PORT per attempt
  ck_assert_int_eq(agent::run_agent(config(2, "exit 5", 0)), 5);  // no restarts left
  fs::remove_all(dir);
}
END_TEST

// A command that cannot be executed ends the run at once with a shell's
// code (127 not found, 126 not executable), its class setup: no restart,
// though restarts are left, and no line per worker from the children.
START_TEST(a_command_that_cannot_be_executed_ends_at_once_as_setup) {
  quiet();
  const auto dir = scratch();
  auto c = config(2, "", 3);
  c.command = {"/nonexistent/ddp-no-such-program"};
  const auto [rc, log] = run_logged(c);
  ck_assert_int_eq(rc, 127);
  CK_CONTAINS(log, "root cause: worker rank ");  // whichever of the two ended first
  CK_CONTAINS(log, ") on node 0 (");
  CK_CONTAINS(log, "could not be started: cannot execute /nonexistent/ddp-no-such-program: No such file or directory");
  CK_CONTAINS(log, "class setup: the step could not begin; no restart");
  ck_assert_msg(log.find("restarting") == std::string::npos, "restarted: %s", log.c_str());
  const auto plain = fs::path(dir) / "not-executable";
  std::ofstream(plain) << "#!/bin/sh\n";
  c.command = {plain.string()};
  const auto [rc2, log2] = run_logged(c);
  ck_assert_int_eq(rc2, 126);
  CK_CONTAINS(log2, "cannot execute " + plain.string() + ": Permission denied");
  ck_assert_msg(log2.find("restarting") == std::string::npos, "restarted: %s", log2.c_str());
  fs::remove_all(dir);
}
END_TEST

// find_hang alone: stalled ranks stalest first; a rank that ended well is
// not watched; no rank counts as silent before the attempt began; a file with
// the epoch as its time was never touched.
START_TEST(find_hang_orders_the_stalled_ranks_by_silence) {
  using namespace std::chrono;
  const agent::WallClock::time_point t0{seconds(1000)};
  const auto at = [&](int s, std::optional<std::uint64_t> step = std::nullopt) {
    return std::optional(Progress{t0 + seconds(s), step});
  };
  const auto hang = agent::find_hang({at(5), at(1), std::nullopt, at(3), at(9)}, t0, t0 + seconds(10), seconds(4));
  ck_assert(hang.has_value());
  CK_STR_EQ(rank_list(agent::stalled_ranks(*hang, 8)), "9,11,8");  // silent since 1 s, 3 s, 5 s
  ck_assert(hang->progressing == std::vector<std::uint32_t>{4});    // local rank 2 ended well
  ck_assert(hang->stalled[0].last == t0 + seconds(1) && !hang->stalled[0].never);
  // Nothing stalled yet; a file older than the attempt counts from its start.
  ck_assert(!agent::find_hang({at(7), at(8)}, t0, t0 + seconds(10), seconds(4)));
  const auto early = agent::find_hang({at(-50)}, t0 + seconds(5), t0 + seconds(10), seconds(4));
  ck_assert(early && !early->stalled[0].never && early->stalled[0].last == t0 + seconds(5));
  // A rank that never touched is no hang by itself (the watch starts at its
  // first touch), but once another is, it is stalled too, and the stalest.
  const std::optional<Progress> never = Progress{};
  ck_assert(!agent::find_hang({never, never}, t0 + seconds(5), t0 + seconds(20), seconds(4)));
  const auto with = agent::find_hang({at(7), never}, t0 + seconds(5), t0 + seconds(20), seconds(4));
  ck_assert(with && with->stalled.size() == 2 && with->stalled[0].local == 1 && with->stalled[0].never);
  CK_CONTAINS(hung_text(*with, seconds(4)),
              "hung: no progress signal since it started, more than 4 s ago, while other ranks made progress");
  // Steps written in the files decide before the clock (coarse, a few ms):
  // rank 1 is a step behind though its file is the newer.
  const auto steps = agent::find_hang({at(1, 50), at(2, 49), at(1, 50)}, t0, t0 + seconds(10), seconds(4));
  ck_assert(steps && steps->stalled[0].local == 1 && *steps->stalled[0].step == 49);
  CK_CONTAINS(hung_text(*steps, seconds(4)),
              "no Python stack to tell where; at step 49 in its DDP_PROGRESS_FILE, the furthest behind");
}
END_TEST

// The progress file: its time, and a step number if it holds one.
START_TEST(read_progress_takes_a_step_number_or_none) {
  const auto dir = scratch();
  const auto write = [&](const std::string& text) {
    std::ofstream(dir + "/p", std::ios::trunc) << text;
    return read_progress(dir + "/p");
  };
  ck_assert(!read_progress(dir + "/missing"));
  ck_assert(write("")->last != agent::WallClock::time_point{} && !write("")->step);
  ck_assert_int_eq(*write("1234\n")->step, 1234);
  ck_assert_int_eq(*write("7                   \n")->step, 7);  // ddp-train's fixed width
  ck_assert(!write("step 7\n")->step);
  ck_assert(!write("-3")->step);
  ck_assert(!write("99999999999999999999999")->step);  // too long for a step
  fs::remove_all(dir);
}
END_TEST

// The culprit by its stack: a rank waiting in torch.distributed waits for
// one that is elsewhere, however long each has been silent.
START_TEST(the_culprit_is_the_stalled_rank_outside_a_collective) {
  using ddp::StalledIn;
  const std::vector<std::string> in_allreduce = {
      "Fatal Python error: Aborted", "", "Current thread 0x00007f4d889992c0 (most recent call first):",
      "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1541 in all_reduce",
      "  File \"/work/train.py\", line 29 in <module>"};
  const std::vector<std::string> asleep = {
      "some earlier line", "Fatal Python error: Aborted", "",
      "Current thread 0x00007f7f78f3b2c0 (most recent call first):",
      "  File \"/work/train.py\", line 21 in fall_asleep", "  File \"/work/train.py\", line 28 in <module>"};
  ck_assert(agent::where_stalled(in_allreduce) == StalledIn::collective);
  ck_assert(agent::where_stalled(asleep) == StalledIn::elsewhere);
  ck_assert(agent::where_stalled({"ddp-train: epoch 1/4", "Aborted"}) == StalledIn::unknown);
  // A stack printed earlier (a warning with a traceback) is not the dump.
  auto old_then_dump = in_allreduce;
  old_then_dump.insert(old_then_dump.begin(), "  File \"/work/train.py\", line 3 in <module>");
  ck_assert(agent::where_stalled(old_then_dump) == StalledIn::collective);
  agent::Hang hang;
  hang.stalled.resize(3);
  ck_assert_int_eq(agent::pick_culprit(hang, {StalledIn::collective, StalledIn::elsewhere, StalledIn::elsewhere}), 1);
  ck_assert_int_eq(agent::pick_culprit(hang, {StalledIn::collective, StalledIn::unknown, StalledIn::collective}), 1);
  ck_assert_int_eq(agent::pick_culprit(hang, {StalledIn::unknown, StalledIn::unknown, StalledIn::unknown}), 0);
}
END_TEST

// --ddp-hang-timeout with real processes: sh workers that touch their
// DDP_PROGRESS_FILE in a loop, and one that stops.
START_TEST(a_silent_worker_is_named_as_the_hang) {
  const auto dir = scratch();
  // Rank 1 is a wrapper (sh) around the process that hangs: the whole
  // process group gets SIGABRT. It would leave a core file in $T
  // (core_pattern "core") if the agent let it: SIGABRT is for the stack.
  const auto [rc, log] = run_watched(3,
                                     "cd $T; ulimit -c unlimited; touch $DDP_PROGRESS_FILE; if [ $RANK = 1 ]; then "
                                     "sh -c 'echo $$ > inner; exec sleep 60'; exit 3; fi; "
                                     "while :; do touch $DDP_PROGRESS_FILE; sleep 0.1; done",
                                     1000);
  ck_assert_int_eq(rc, 128 + SIGABRT);  // the stalled worker, killed for its stack
  CK_CONTAINS(log, "root cause: worker rank 1 (local rank 1) on node 0");
  CK_CONTAINS(log, "hung: no progress for 1 s (--ddp-hang-timeout");
  CK_CONTAINS(log, "stalled on node 0: ranks 1, still progressing: 0,2");
  for (const auto& entry : fs::directory_iterator(dir))
    ck_assert_msg(entry.path().filename().string().rfind("core", 0) != 0, "a core file: %s",
                  entry.path().c_str());
  const pid_t inner = pid_t(std::stol(slurp(fs::path(dir) / "inner")));
  // Gone, or a zombie its new parent has not reaped yet. SIGABRT reached it
  // with its group; on a loaded machine its exit may still be under way
  // (state R) when the agent has reaped the wrapper: it gets a few seconds.
  std::string state;
  for (int i = 0; i < 300; ++i, usleep(10000)) {
    state = slurp("/proc/" + std::to_string(inner) + "/stat");
    state = state.empty() ? "gone" : state.substr(state.rfind(')') + 2, 1);
    if (state == "gone" || state == "Z") break;
  }
  ck_assert_msg(state == "gone" || state == "Z", "the hung process inside the wrapper (pid %d) is in state %s",
                int(inner), state.c_str());
  fs::remove_all(dir);
}
END_TEST

// Ranks waiting in a collective that one rank never joined stall one step
// after it: every rank is stalled when the watch looks, and the culprit is
// the one silent longest.
START_TEST(in_a_collective_hang_the_rank_silent_longest_is_named) {
  const auto dir = scratch();
  const auto [rc, log] = run_watched(
      4, "touch $DDP_PROGRESS_FILE; sleep 0.2; [ $RANK = 2 ] || { sleep 0.4; touch $DDP_PROGRESS_FILE; }; exec sleep 60",
      1500);
  ck_assert_int_eq(rc, 128 + SIGABRT);
  CK_CONTAINS(log, "root cause: worker rank 2 (local rank 2) on node 0");
  CK_CONTAINS(log, "stalled on node 0: ranks 2,");
  fs::remove_all(dir);
}
END_TEST

// A start longer than the timeout is no hang (the watch starts at each
// worker's first touch); a script that never touches is told how, once.
START_TEST(a_script_that_never_signals_progress_is_told_how) {
  const auto dir = scratch();
  const auto [rc, log] =
      run_watched(2, "echo $PYTHONFAULTHANDLER ${DDP_PROGRESS_FILE##*/} > $T/env$RANK; sleep 2.5", 1000);
  ck_assert_int_eq(rc, 0);
  CK_CONTAINS(log, "node 0: --ddp-hang-timeout=1 s watched nothing: no worker touched its DDP_PROGRESS_FILE");
  CK_CONTAINS(log, "if p := os.environ.get(\"DDP_PROGRESS_FILE\"): pathlib.Path(p).touch()");
  ck_assert_int_eq(std::count(log.begin(), log.end(), '\n'), 1);
  CK_STR_EQ(slurp(fs::path(dir) / "env0"), "1 progress\n");  // faulthandler on, a file of its own
  fs::remove_all(dir);
}
END_TEST

START_TEST(without_a_hang_timeout_nothing_is_watched) {
  const auto dir = scratch();
  ck_assert_int_eq(agent::run_agent(config(1, "echo ${DDP_PROGRESS_FILE-unset} > $T/p; sleep 1.5")), 0);
  CK_STR_EQ(slurp(fs::path(dir) / "p"), "unset\n");
  fs::remove_all(dir);
}
END_TEST

// ---------------------------------------------------------------------------
// The rendezvous port under attack. Coordinators run in this thread's event
// loop; the test's own blocking-free sockets play strangers and agents, and
// every wait pumps the loop, so no thread and no sleep-and-hope is needed.

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const std::string kSecretA(64, 'a'), kSecretB(64, 'b');

// Coordinators (and clients) sharing one event loop.
struct Rig {
  agent::EventLoop loop;
  std::list<agent::Coordinator> coordinators;
  std::list<agent::RdzvClient> clients;

  agent::Coordinator& coordinator(const std::string& run, const std::string& secret, std::uint32_t nnodes,
                                  milliseconds handshake = milliseconds(5000), std::size_t max_pending = 64,
                                  const std::function<void(NodePlan&)>& tweak = {}) {
    NodePlan plan;
    plan.run_id = run;
    plan.nnodes = nnodes;
    plan.master_addr = "127.0.0.1";
    if (tweak) tweak(plan);
    agent::CoordinatorSettings c;
    c.secret = secret;
    c.master_addr = "127.0.0.1";
    c.claim_master_port = [](std::uint32_t) -> Result<PortClaim> { return PortClaim(-1, 1); };
    c.handshake_timeout = handshake;
    c.max_pending = max_pending;
    auto& coord = coordinators.emplace_back(loop, plan, std::move(c));
    ck_assert(coord.listen({0}, PortRange{1024, 65535}).ok());
    return coord;
  }
  void turn() {
    ck_assert(loop.run_once(milliseconds(2)).ok());
    for (auto& c : coordinators) c.tick();
    for (auto& c : clients) c.tick();
  }
  void pump(milliseconds for_how_long) {
    const auto end = Clock::now() + for_how_long;
    while (Clock::now() < end) turn();
  }
};

// One TCP connection to a coordinator, from a chosen loopback source address.
class Peer {
 public:
  Peer(std::uint16_t port, const char* source = "127.0.0.1") : Peer(source) { connect(port); }
  // Not connected yet: its descriptor exists (for the test with a low descriptor limit).
  explicit Peer(const char* source) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd_, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    ck_assert_int_eq(::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from), 0);
  }
  void connect(std::uint16_t port) {
    port_ = port;
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    const int rc = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to);
    ck_assert(rc == 0 || errno == EINPROGRESS);
  }
  // A connection accepted by a test's listener: port() is the listener's.
  explicit Peer(int accepted_fd) : fd_(accepted_fd) {
    sockaddr_in local{};
    socklen_t len = sizeof local;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len);
    port_ = ntohs(local.sin_port);
  }
  // The coordinator's port (connected to, or listened on).
  std::uint16_t port() const { return port_; }
  // The handshake is done: lines are sealed out and opened in from here on,
  // as `side` does it (rdzv_auth.hpp).
  void seal(const std::string& key, rdzv::Seal::Side side) { seal_.emplace(key, side); }
  ~Peer() {
    if (fd_ >= 0) ::close(fd_);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  void send_raw(const std::string& bytes) {
    auto saved = std::move(seal_);
    seal_.reset();
    send(bytes);
    seal_ = std::move(saved);
  }
  void send(const std::string& text) {
    std::string bytes = text;
    if (seal_) {  // each line sealed
      bytes.clear();
      for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
        bytes += seal_->close(std::string_view(text).substr(at, nl - at)) + "\n";
    }
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n > 0) {
        off += std::size_t(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd p{fd_, POLLOUT, 0};
        ::poll(&p, 1, 10);
      } else {
        return;  // the coordinator closed it (expected for some of the attacks)
      }
    }
  }
  // The next line (without '\n'); "<eof>" when the coordinator closed the
  // connection, "<timeout>" when nothing came within `limit`.
  std::string line(Rig& rig, milliseconds limit = milliseconds(3000)) {
    const auto end = Clock::now() + limit;
    for (;;) {
      if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
        auto l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        if (!seal_) return l;
        auto opened = seal_->open(l);
        return opened ? *opened : "<unopened: " + opened.error() + ">";
      }
      if (eof_) return "<eof>";
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n > 0) {
        buf_.append(chunk, std::size_t(n));
        continue;
      }
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        eof_ = true;
        continue;
      }
      if (Clock::now() >= end) return "<timeout>";
      rig.turn();
    }
  }
  // Reads (and drops) lines until the coordinator closes the connection.
  bool closed_within(Rig& rig, milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (!eof_ && Clock::now() < end)
      line(rig, std::chrono::duration_cast<milliseconds>(end - Clock::now()) + milliseconds(1));
    return eof_;
  }
  // The CHALLENGE's nonce (and run id), checked.
  std::string challenge(Rig& rig, const std::string& run) {
    const auto text = line(rig);
    const auto m = rdzv::decode(text);
    ck_assert_msg(m.ok() && m->verb == "CHALLENGE", "expected a CHALLENGE, got '%s'", text.c_str());
    CK_STR_EQ(m->get("run").value_or(""), run);
    return m->get("nonce").value_or("");
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::string buf_;
  bool eof_ = false;
  std::optional<rdzv::Seal> seal_;
};

// A listening socket standing in for node 0's coordinator, for the client's tests.
class FakeCoordinator {
 public:
  FakeCoordinator() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    ck_assert_int_eq(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ck_assert_int_eq(::listen(fd_, 8), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~FakeCoordinator() { ::close(fd_); }
  FakeCoordinator(const FakeCoordinator&) = delete;
  FakeCoordinator& operator=(const FakeCoordinator&) = delete;
  std::uint16_t port() const { return port_; }
  // Node 1's agent of step `run`, on its way here; what it gives up with (the
  // message of its on_lost) lands in the string returned.
  // `then`: ports to try after this one.
  std::shared_ptr<std::string> client(Rig& rig, const std::string& run, milliseconds rdzv_timeout = milliseconds(60000),
                                      const std::vector<std::uint16_t>& then = {}) {
    auto lost = std::make_shared<std::string>();
    agent::ClientConfig cfg;
    cfg.run_id = run;
    cfg.secret = kSecretA;
    cfg.node_rank = 1;
    cfg.coordinator_addr = "127.0.0.1";
    cfg.coordinator_ports = {port_};
    cfg.coordinator_ports.insert(cfg.coordinator_ports.end(), then.begin(), then.end());
    cfg.rdzv_timeout = rdzv_timeout;
    rig.clients
        .emplace_back(rig.loop, cfg,
                      agent::RdzvClient::Events{[](const rdzv::Start&) {}, [](std::uint32_t) {}, [](const Verdict&) {},
                                                [lost](const std::string& why) { *lost = why; },
                                                [](const rdzv::Order&) {}})
        .begin();
    return lost;
  }
  // The next agent's connection, the loop turning meanwhile.
  int accept(Rig& rig) {
    const auto end = Clock::now() + milliseconds(3000);
    for (;;) {
      const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) return fd;
      ck_assert_msg(Clock::now() < end, "the agent did not connect");
      rig.turn();
    }
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// What a handshake on `p` binds (node 0 at 127.0.0.1, p's port).
// (Views: the strings must outlive the facts.)
rdzv::HandshakeFacts facts(const Peer& p, std::string_view secret, std::string_view run, std::uint32_t node,
                           std::string_view snonce, std::string_view cnonce) {
  return {secret, run, node, snonce, cnonce, {"127.0.0.1", p.port()}};
}

// A RESPONSE line as an agent for `node` writes it on `p`, for the challenge
// `snonce` (an older agent's: `version`, in the older proof).
std::string response(const Peer& p, const std::string& secret, const std::string& run, std::uint32_t node,
                     const std::string& snonce, std::uint32_t version = rdzv::kProtocolVersion) {
  const auto cnonce = rdzv::random_hex(rdzv::kNonceBytes);
  const auto mac = version >= rdzv::kProtocolVersion ? rdzv::client_proof(facts(p, secret, run, node, snonce, cnonce))
                                                     : rdzv::client_mac(secret, run, node, snonce, cnonce);
  return rdzv::encode(rdzv::Response{node, cnonce, mac, version, "9.9.9"}.to_message());
}

// The root cause of a coordinator's verdict, as node 0 prints it.
std::string cause_of(const agent::Coordinator& c) {
  ck_assert(c.verdict() && c.verdict()->cause);
  return describe(*c.verdict()->cause);
}

// Whether `line` is a WELCOME whose proof is node 0's for that RESPONSE on
// `p`; if so, `p` is sealed from here on, as the agent's side.
bool welcomed(Peer& p, const std::string& line, const std::string& secret, const std::string& run, std::uint32_t node,
              const std::string& snonce, const std::string& response_line) {
  const auto w = rdzv::decode(line);
  const auto r = rdzv::decode(response_line.substr(0, response_line.size() - 1));
  if (!w.ok() || !r.ok() || w->verb != "WELCOME") return false;
  const auto cnonce = r->get("cnonce").value_or("");
  const auto f = facts(p, secret, run, node, snonce, cnonce);
  if (!rdzv::mac_equal(w->get("mac").value_or(""), rdzv::server_proof(f))) return false;
  p.seal(rdzv::session_key(f), rdzv::Seal::Side::Agent);
  return true;
}

// `p` through the handshake as step `run`'s agent for `node`: welcomed
// with node 0's proof, and sealed from here on.
void join_as(Rig& rig, Peer& p, const std::string& secret, const std::string& run, std::uint32_t node) {
  const auto snonce = p.challenge(rig, run);
  const auto r = response(p, secret, run, node, snonce);
  p.send(r);
  ck_assert(welcomed(p, p.line(rig), secret, run, node, snonce, r));
}

constexpr auto kRefused = "REFUSED reason=authentication%20failed";

START_TEST(a_response_from_another_job_is_refused) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 2);
  auto& b = rig.coordinator("200.0", kSecretB, 2);
  // Job A's agent for node 1 answers A's challenge; the line is recorded...
  Peer to_a(a.port());
  const auto sa = to_a.challenge(rig, "100.0");
  const auto recorded = response(to_a, kSecretA, "100.0", 1, sa);
  // ... and replayed to job B: refused, and that connection closed.
  Peer replay(b.port());
  replay.challenge(rig, "200.0");
  replay.send(recorded);
  CK_STR_EQ(replay.line(rig), kRefused);
  CK_STR_EQ(replay.line(rig), "<eof>");
  // Job A's secret over B's own fresh challenge, as A's or as B's run: refused too.
  for (const std::string run : {"100.0", "200.0"}) {
    Peer other(b.port());
    const auto sb = other.challenge(rig, "200.0");
    other.send(response(other, kSecretA, run, 1, sb));
    CK_STR_EQ(other.line(rig), kRefused);
    CK_STR_EQ(other.line(rig), "<eof>");
  }
  // The recorded line was genuine: job A welcomes it.
  to_a.send(recorded);
  ck_assert(welcomed(to_a, to_a.line(rig), kSecretA, "100.0", 1, sa, recorded));
  // And job B's real node 1 still gets in.
  Peer real_b(b.port());
  join_as(rig, real_b, kSecretB, "200.0", 1);
  ck_assert_uint_eq(b.pending_peers(), 0);
}
END_TEST

START_TEST(a_response_replayed_on_a_new_connection_is_refused) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 3);
  // A response recorded on a connection that was then cut, before it was sent on.
  std::string recorded, s1;
  {
    Peer first(a.port());
    s1 = first.challenge(rig, "100.0");
    recorded = response(first, kSecretA, "100.0", 1, s1);
  }
  Peer second(a.port());
  const auto s2 = second.challenge(rig, "100.0");
  ck_assert(s2 != s1);  // every connection gets its own challenge
  second.send(recorded);
  CK_STR_EQ(second.line(rig), kRefused);
  CK_STR_EQ(second.line(rig), "<eof>");
  // A response that did authenticate (node 2), replayed on a new connection:
  // refused for its MAC, before the node's state is even looked at.
  Peer real2(a.port());
  const auto s3 = real2.challenge(rig, "100.0");
  const auto r3 = response(real2, kSecretA, "100.0", 2, s3);
  real2.send(r3);
  ck_assert(welcomed(real2, real2.line(rig), kSecretA, "100.0", 2, s3, r3));
  Peer replay(a.port());
  replay.challenge(rig, "100.0");
  replay.send(r3);
  CK_STR_EQ(replay.line(rig), kRefused);
  // Node 1's slot is still free for the real node 1.
  Peer real1(a.port());
  join_as(rig, real1, kSecretA, "100.0", 1);
  rig.pump(milliseconds(50));
  ck_assert_uint_eq(a.open_peers(), 2);
}
END_TEST

// A fake coordinator records the WELCOME of one connection, cuts it before
// the agent reads it, and replays it on the agent's next connection: the agent
// does not join, and looks on (until node 0 has proved itself, a port may be
// anything's). A second CHALLENGE on one connection is passed by too: no
// second proof for the asking.
START_TEST(the_client_refuses_a_welcome_replayed_on_a_new_connection) {
  quiet();
  Rig rig;
  FakeCoordinator listener;
  const auto accept_one = [&] { return listener.accept(rig); };
  const auto lost = listener.client(rig, "100.0");
  const std::string snonce = rdzv::random_hex(rdzv::kNonceBytes);
  auto challenge = rdzv::Challenge{rdzv::kProtocolVersion, "test", "100.0", snonce}.to_message();
  std::string welcome;
  {
    Peer first(accept_one());
    first.send(rdzv::encode(challenge));
    const auto r = rdzv::decode(first.line(rig));
    ck_assert(r.ok() && r->verb == "RESPONSE");
    welcome = rdzv::encode(rdzv::Welcome{rdzv::server_proof(
                                             facts(first, kSecretA, "100.0", 1, snonce, r->get("cnonce").value_or("")))}
                               .to_message());
  }  // cut: the agent never read the WELCOME
  Peer again(accept_one());
  again.send(welcome);
  CK_STR_EQ(again.line(rig), "<eof>");  // no JOIN: the agent left this impostor
  ck_assert(lost->empty());
  Peer third(accept_one());  // and came back to look again
  // Replayed after a CHALLENGE of this run: its proof binds other nonces.
  challenge.set("nonce", rdzv::random_hex(rdzv::kNonceBytes));
  third.send(rdzv::encode(challenge));
  ck_assert(rdzv::decode(third.line(rig))->verb == "RESPONSE");
  third.send(welcome);
  CK_STR_EQ(third.line(rig), "<eof>");
  ck_assert(lost->empty());
  Peer fourth(accept_one());
  challenge.set("nonce", rdzv::random_hex(rdzv::kNonceBytes));
  fourth.send(rdzv::encode(challenge));
  ck_assert(rdzv::decode(fourth.line(rig))->verb == "RESPONSE");
  challenge.set("nonce", rdzv::random_hex(rdzv::kNonceBytes));
  fourth.send(rdzv::encode(challenge));  // a second one on the same connection
  CK_STR_EQ(fourth.line(rig), "<eof>");
  ck_assert(lost->empty());
  Peer fifth(accept_one());  // looking on still
}
END_TEST

// A node of another release (a rolling upgrade caught half-way) proves the
// secret: refused with one reason naming both versions, and the step ends
// with it as the root cause before anything starts.
START_TEST(a_node_of_another_version_ends_the_rendezvous_naming_both) {
  quiet();
  Rig rig;
  {  // a newer agent: this protocol's proof, for this port
    auto& newer = rig.coordinator("301.0", kSecretA, 2);
    Peer p(newer.port());
    const auto s = p.challenge(rig, "301.0");
    p.send(response(p, kSecretA, "301.0", 1, s, rdzv::kProtocolVersion + 1));
    CK_CONTAINS(p.line(rig), "%28rendezvous%20protocol%20" + std::to_string(rdzv::kProtocolVersion + 1) + "%29");
    for (int i = 0; i < 100 && !newer.verdict(); ++i) rig.turn();
    ck_assert(newer.verdict() && newer.verdict()->exit_code() == 1);
  }
  auto& c = rig.coordinator("300.0", kSecretA, 2);
  Peer old(c.port());
  const auto s = old.challenge(rig, "300.0");
  old.send(response(old, kSecretA, "300.0", 1, s, rdzv::kProtocolVersion - 1));
  CK_CONTAINS(old.line(rig), "REFUSED reason=node%201%20%28from%20127.0.0.1%29%20runs%20slurm-ddp%209.9.9");
  CK_STR_EQ(old.line(rig), "<eof>");
  for (int i = 0; i < 100 && !c.verdict(); ++i) rig.turn();
  ck_assert_int_eq(c.verdict()->exit_code(), 1);
  CK_CONTAINS(cause_of(c), "node 1 (from 127.0.0.1) runs slurm-ddp 9.9.9 (rendezvous protocol " +
                               std::to_string(rdzv::kProtocolVersion - 1) + ") but node 0 runs slurm-ddp ");
}
END_TEST

// The agent's side: an older coordinator (protocol 4-8) still gets its
// RESPONSE, in the older proof over a marked nonce (so it can name both
// releases); whatever it answers, the agent cannot tell it from a stranger
// posing as one, so it looks on, and its message at the rendezvous timeout
// names the other release. A newer coordinator gets this protocol's proof,
// and its proven refusal ends the rendezvous at once.
START_TEST(the_client_answers_another_version_and_names_both) {
  quiet();
  Rig rig;
  FakeCoordinator listener;
  {
    const auto lost = listener.client(rig, "401.0", milliseconds(1500));
    Peer newer(listener.accept(rig));
    const std::string snonce = rdzv::random_hex(rdzv::kNonceBytes);
    newer.send(rdzv::encode(rdzv::Challenge{rdzv::kProtocolVersion + 1, "9.9.9", "401.0", snonce}.to_message()));
    const auto r = rdzv::Response::from_message(*rdzv::decode(newer.line(rig)));
    ck_assert(r.ok() && r->version == rdzv::kProtocolVersion && !rdzv::is_marked(r->cnonce));
    const auto f = facts(newer, kSecretA, "401.0", 1, snonce, r->cnonce);
    ck_assert(rdzv::mac_equal(r->mac, rdzv::client_proof(f)));
    const std::string why = "node 1 runs slurm-ddp 0.4.0 (protocol 9) but node 0 runs slurm-ddp 9.9.9 (protocol 10)";
    newer.send(rdzv::encode(rdzv::Refused{why, rdzv::refusal_proof(f, why)}.to_message()));
    for (int i = 0; i < 200 && lost->empty(); ++i) rig.turn();
    CK_STR_EQ(*lost, "the rendezvous refused this node: " + why);
  }
  for (const bool refuse : {true, false}) {
    const auto lost = listener.client(rig, "400.0", milliseconds(1500));
    Peer coordinator(listener.accept(rig));
    const std::string snonce = rdzv::random_hex(rdzv::kNonceBytes);
    coordinator.send(rdzv::encode(rdzv::Challenge{rdzv::kProtocolVersion - 1, "0.3.0", "400.0", snonce}.to_message()));
    const auto r = rdzv::Response::from_message(*rdzv::decode(coordinator.line(rig)));
    ck_assert(r.ok() && r->version == rdzv::kProtocolVersion);
    ck_assert(rdzv::is_marked(r->cnonce));
    ck_assert(rdzv::mac_equal(r->mac, rdzv::client_mac(kSecretA, "400.0", 1, snonce, r->cnonce)));
    if (refuse)
      coordinator.send(rdzv::encode(rdzv::Refused{"node 1 runs another release"}.to_message()));
    else
      coordinator.send(rdzv::encode(rdzv::Welcome{rdzv::server_mac(kSecretA, "400.0", 1, snonce, r->cnonce)}.to_message()));
    CK_STR_EQ(coordinator.line(rig), "<eof>");  // no JOIN
    ck_assert(lost->empty());
    Peer back(listener.accept(rig));  // it looks on, until its rendezvous timeout
    const auto until = Clock::now() + milliseconds(3000);
    while (lost->empty() && Clock::now() < until) rig.turn();
    CK_CONTAINS(*lost, "says it runs slurm-ddp 0.3.0 (protocol " + std::to_string(rdzv::kProtocolVersion - 1) + ")");
    CK_CONTAINS(*lost, "install the same slurm-ddp release on every node");
  }
}
END_TEST

// The proofs bind node 0's address and port: a RESPONSE made for another
// port (a relay from a port a stranger squats) or another address never
// verifies, whatever else it gets right.
START_TEST(a_proof_made_for_another_port_or_address_is_refused) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 2);
  for (const rdzv::Endpoint& elsewhere : {rdzv::Endpoint{"127.0.0.1", std::uint16_t(a.port() + 1)},
                                         rdzv::Endpoint{"127.0.0.2", a.port()}}) {
    Peer relay(a.port());
    const auto s = relay.challenge(rig, "100.0");
    const auto cnonce = rdzv::random_hex(rdzv::kNonceBytes);
    const auto mac = rdzv::client_proof({kSecretA, "100.0", 1, s, cnonce, elsewhere});
    relay.send(rdzv::encode(rdzv::Response{1, cnonce, mac, rdzv::kProtocolVersion, "9.9.9"}.to_message()));
    CK_STR_EQ(relay.line(rig), kRefused);
    CK_STR_EQ(relay.line(rig), "<eof>");
  }
  Peer real(a.port());
  join_as(rig, real, kSecretA, "100.0", 1);
}
END_TEST

// A stranger posing as an older rendezvous gets this release's agent's
// answer in the older proof and relays it to node 0 as an older agent's:
// the marked nonce gives it away. Refused, named, and the step goes on.
START_TEST(a_relayed_answer_to_an_older_challenge_does_not_end_the_step) {
  CapturedLog log;
  {
    Rig rig;
    auto& a = rig.coordinator("100.0", kSecretA, 2);
    Peer relay(a.port());
    const auto s = relay.challenge(rig, "100.0");
    const auto cnonce = rdzv::marked_client_nonce();
    const auto mac = rdzv::client_mac(kSecretA, "100.0", 1, s, cnonce);  // what the agent answered elsewhere
    relay.send(rdzv::encode(rdzv::Response{1, cnonce, mac, rdzv::kProtocolVersion - 1, "0.3.0"}.to_message()));
    CK_STR_EQ(relay.line(rig), "<eof>");
    rig.pump(milliseconds(100));
    ck_assert(!a.verdict());  // no "node 1 runs another release"
    Peer real(a.port());
    join_as(rig, real, kSecretA, "100.0", 1);
    rig.pump(milliseconds(50));
  }
  CK_CONTAINS(log.text(), "it relayed node 1's answer to another port's challenge");
}
END_TEST

// Another user's process holds the first candidate port and answers as a
// rendezvous would, up to a refusal without node 0's proof; or it relays to
// node 0's real port and adds lines of its own. The agent passes it by and
// joins node 0 at the next port: one port's cost, no more.
START_TEST(a_squatter_on_the_first_port_costs_the_agent_one_port) {
  quiet();
  for (const bool relay : {false, true}) {
    Rig rig;
    auto& c = rig.coordinator("sq.0", kSecretA, 2);
    FakeCoordinator squatter;
    const auto lost = squatter.client(rig, "sq.0", milliseconds(60000), {c.port()});
    Peer victim(squatter.accept(rig));
    if (!relay) {
      victim.send(rdzv::encode(
          rdzv::Challenge{rdzv::kProtocolVersion, "0.4.0", "sq.0", rdzv::random_hex(rdzv::kNonceBytes)}.to_message()));
      CK_STR_EQ(victim.line(rig).substr(0, 8), "RESPONSE");
      victim.send(rdzv::encode(rdzv::Refused{"node 1 is not in this step"}.to_message()));
    } else {
      Peer node0(c.port());
      victim.send(node0.line(rig) + "\n");  // the real CHALLENGE
      node0.send(victim.line(rig) + "\n");  // the agent's RESPONSE, made for the squatter's port
      const auto answer = node0.line(rig);
      CK_STR_EQ(answer, kRefused);
      victim.send(answer + "\n");
      victim.send("START attempt=0 master_addr=10.9.9.9 master_port=4444\n");
    }
    CK_STR_EQ(victim.line(rig), "<eof>");
    for (int i = 0; i < 500 && c.open_peers() == 0; ++i) rig.turn();
    ck_assert_uint_eq(c.open_peers(), 1);  // node 1 is in, at the real port
    ck_assert(lost->empty());
  }
}
END_TEST

START_TEST(malformed_input_closes_only_that_connection) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 2);
  Peer agent1(a.port());
  const auto s = agent1.challenge(rig, "100.0");
  const auto r = response(agent1, kSecretA, "100.0", 1, s);
  agent1.send(r);
  ck_assert(welcomed(agent1, agent1.line(rig), kSecretA, "100.0", 1, s, r));
  std::string fields = "RESPONSE";
  for (int i = 0; i < 65; ++i) fields += " k" + std::to_string(i) + "=1";
  const std::string attacks[] = {
      std::string(rdzv::kMaxLineBytes + 1, 'A'),                // oversized, no newline
      "JOIN x=" + std::string(200 * 1024, 'a') + "\n",          // huge, with its newline
      std::string("RESPONSE node=1\0 cnonce=x\n", 26),          // a NUL byte
      "RESPONSE node=1\r\n",                                    // CRLF
      "RESPONSE node=%4 mac=%zz\n",                             // bad %-escapes
      "HELLO there=1\n",                                        // an unknown verb
      "JOIN version=1 nproc=1\n",                               // a valid verb before authenticating
      fields + "\n",                                            // too many fields
      "RESPONSE node=99999999999999999999 cnonce=ab mac=cd\n",  // fields of the wrong form
      "\n",                                                     // an empty line
      std::string(1100, 'B'),                                   // a stranger's line over 1 KiB, unfinished
      std::string(4000, 'y') + "\n",                            // over 1 KiB with its newline
      [] {                                                      // short lines past the 4 KiB budget
        std::string many;
        while (many.size() < 8192) many += "y\n";
        return many;
      }(),
  };
  for (const auto& attack : attacks) {
    Peer stranger(a.port());
    stranger.challenge(rig, "100.0");
    stranger.send(attack);
    ck_assert_msg(stranger.closed_within(rig, milliseconds(3000)), "still open after %.40s", attack.c_str());
  }
  rig.pump(milliseconds(1200));
  ck_assert_uint_eq(a.open_peers(), 1);  // the agent's connection only
  ck_assert_uint_eq(a.pending_peers(), 0);
  std::string seen;
  for (int i = 0; i < 3 && seen != "HB"; ++i) seen = agent1.line(rig, milliseconds(1500));
  CK_STR_EQ(seen, "HB");  // and it is served as before
}
END_TEST

START_TEST(idle_connections_time_out_and_the_oldest_are_shed) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 3, milliseconds(500), 8);
  ck_assert_uint_eq(a.max_pending(), 8);
  // Eight idle strangers from 127.0.0.2 fill the pending slots.
  std::list<Peer> idle;
  for (int i = 0; i < 8; ++i) idle.emplace_back(a.port(), "127.0.0.2").challenge(rig, "100.0");
  ck_assert_uint_eq(a.pending_peers(), 8);
  // A ninth from there sheds the oldest one.
  idle.emplace_back(a.port(), "127.0.0.2").challenge(rig, "100.0");
  ck_assert(idle.front().closed_within(rig, milliseconds(1000)));
  idle.pop_front();
  ck_assert_uint_eq(a.pending_peers(), 8);
  // The real node 1 from another address gets in: the busiest address pays.
  Peer node1(a.port(), "127.0.0.1");
  join_as(rig, node1, kSecretA, "100.0", 1);
  ck_assert(idle.front().closed_within(rig, milliseconds(1000)));
  idle.pop_front();
  // From one address only, the oldest goes: node 2 connecting after a flood
  // from its own address still gets in.
  std::list<Peer> same;
  for (int i = 0; i < 8; ++i) same.emplace_back(a.port(), "127.0.0.3").challenge(rig, "100.0");
  Peer node2(a.port(), "127.0.0.3");
  join_as(rig, node2, kSecretA, "100.0", 2);
  ck_assert_uint_le(a.pending_peers(), 8);
  // Every idle one is cut at the handshake timeout; the agents stay.
  for (auto* group : {&idle, &same})
    for (auto& p : *group) ck_assert(p.closed_within(rig, milliseconds(3000)));
  ck_assert_uint_eq(a.pending_peers(), 0);
  ck_assert_uint_eq(a.open_peers(), 2);
}
END_TEST

// A large step's nodes connect at once, each from an address of its own:
// past max_pending nobody is shed before it had half the handshake timeout
// to answer (1 s here); accepting waits for room instead.
START_TEST(one_connection_per_address_is_given_time_to_answer) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 3, milliseconds(2000), 8);
  std::list<Peer> idle;
  for (int i = 1; i <= 9; ++i) idle.emplace_back(a.port(), ("127.0.1." + std::to_string(i)).c_str()).challenge(rig, "100.0");
  ck_assert_uint_eq(a.pending_peers(), 9);
  ck_assert(!idle.front().closed_within(rig, milliseconds(600)));
  ck_assert(idle.front().closed_within(rig, milliseconds(1000)));  // shed, about 1 s after it came
  idle.pop_front();
  ck_assert_uint_eq(a.pending_peers(), 8);
}
END_TEST

// The gate's waiting connections, by age and by address: what shedding and
// the handshake deadline look through instead of every peer.
START_TEST(the_waiting_connections_are_kept_by_age_and_counted_by_address) {
  ddp::agent::PendingIndex w;
  ck_assert(w.empty() && w.one_per_address() && !w.oldest() && !w.oldest_of_busiest());
  w.add(7, "10.0.0.7");
  w.add(3, "10.0.0.3");
  w.add(9, "10.0.0.9");
  ck_assert(w.one_per_address());      // a large step's nodes: one each
  ck_assert_uint_eq(*w.oldest(), 3);   // the smallest id came first
  w.add(12, "10.0.0.9");
  w.add(15, "10.0.0.9");
  ck_assert(!w.one_per_address());     // a flood from one address
  ck_assert_uint_eq(w.count("10.0.0.9"), 3);
  ck_assert_uint_eq(*w.oldest_of_busiest(), 9);  // the busiest address pays, its oldest first
  w.add(15, "10.0.0.9");               // twice is once
  ck_assert_uint_eq(w.size(), 5);
  w.remove(12);
  w.remove(12);                        // authenticated, then closed: removed once
  w.remove(15);
  ck_assert(w.one_per_address());
  ck_assert_uint_eq(w.count("10.0.0.9"), 1);
  ck_assert_uint_eq(*w.oldest_of_busiest(), 3);  // all equal: the oldest
  w.remove(3);
  ck_assert_uint_eq(*w.oldest(), 7);
  ck_assert_uint_eq(w.by_age().size(), 2);
  ck_assert_uint_eq(w.count("10.0.0.3"), 0);
}
END_TEST

// Descriptors run out before the pending limit is reached (node 0 holding many
// nodes' sockets): accept() fails with EMFILE, and the oldest stranger is shed
// so that the real agent is accepted at once, not after the handshake timeout.
START_TEST(out_of_descriptors_the_oldest_stranger_is_shed) {
  quiet();
  Rig rig;
  auto& a = rig.coordinator("100.0", kSecretA, 2, milliseconds(20000), 64);
  // Both ends live in this process: make the test's own ends first.
  std::list<Peer> strangers;
  for (int i = 0; i < 12; ++i) strangers.emplace_back("127.0.0.2");
  Peer node1("127.0.0.1");
  rlimit saved{};
  ck_assert_int_eq(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int probe = ::dup(0);  // the lowest free descriptor
  ::close(probe);
  rlimit low = saved;
  low.rlim_cur = rlim_t(probe + 10);  // ten accepted sockets, then EMFILE
  ck_assert_int_eq(::setrlimit(RLIMIT_NOFILE, &low), 0);
  for (auto& p : strangers) {
    p.connect(a.port());
    p.challenge(rig, "100.0");
  }
  ck_assert_uint_le(a.pending_peers(), 10);
  ck_assert(strangers.front().closed_within(rig, milliseconds(2000)));  // shed
  node1.connect(a.port());
  join_as(rig, node1, kSecretA, "100.0", 1);
  ck_assert_int_eq(::setrlimit(RLIMIT_NOFILE, &saved), 0);
}
END_TEST

START_TEST(a_flood_is_logged_in_a_few_lines) {
  CapturedLog log;
  {
    Rig rig;
    auto& a = rig.coordinator("100.0", kSecretA, 2, milliseconds(500));
    for (int i = 0; i < 3; ++i) {
      Peer garbage(a.port());
      garbage.challenge(rig, "100.0");
      garbage.send("\x01\x02\n");
      ck_assert(garbage.closed_within(rig, milliseconds(2000)));
    }
    std::list<Peer> idle;
    for (int i = 0; i < 40; ++i) idle.emplace_back(a.port()).challenge(rig, "100.0");
    for (auto& p : idle) ck_assert(p.closed_within(rig, milliseconds(3000)));
    rig.pump(milliseconds(50));
  }  // the coordinator's end says what the last window did not show
  const auto text = log.text();
  const auto lines = std::count(text.begin(), text.end(), '\n');
  ck_assert_msg(lines <= 6, "43 strangers took %ld log lines:\n%s", long(lines), text.c_str());
  CK_CONTAINS(text, "rendezvous: closed 127.0.0.1:");  // the first ones one by one, with the reason
  CK_CONTAINS(text, "protocol error");
  // Two lines of each kind, then the counts of the rest.
  CK_CONTAINS(text, "no authentication within 0.5 s");
  CK_CONTAINS(text, "39 more connection(s) without the step's secret closed");
  CK_CONTAINS(text, "(1 broke the protocol or hung up, 38 timed out)");
}
END_TEST

// Fake agents for nodes 0..n-1 of a coordinator: authenticated, joined, and
// past START; `say` sends one protocol message from a node.
struct FakeNodes {
  std::vector<std::unique_ptr<Peer>> peers;
  FakeNodes(Rig& rig, agent::Coordinator& coordinator, const std::string& run, const std::string& secret,
            std::uint32_t n, const std::string& layout = "") {
    for (std::uint32_t node = 0; node < n; ++node) {
      auto& p = *peers.emplace_back(std::make_unique<Peer>(coordinator.port()));
      join_as(rig, p, secret, run, node);
      p.send(rdzv::encode(rdzv::Join{2, {}, "n" + std::to_string(node), "10.0.0." + std::to_string(node), ""}.to_message()));
    }
    for (auto& p : peers) {
      const auto start = next(rig, *p);
      CK_STR_EQ(start.substr(0, 5), "START");
      CK_CONTAINS(start, layout);
    }
  }
  // The next line that is not a heartbeat, or "<timeout>".
  static std::string next(Rig& rig, Peer& p, milliseconds limit = milliseconds(3000)) {
    for (;;) {
      auto l = p.line(rig, limit);
      if (l != "HB") return l;
    }
  }
  void say(std::uint32_t node, const rdzv::Message& m) { peers[node]->send(rdzv::encode(m)); }
  // The node's agent dies: its connection ends.
  void drop(std::uint32_t node) { peers[node].reset(); }
};

// A worker's failure as a node reports it (FAIL).
Failure failure(std::uint32_t rank, int code, std::uint32_t attempt = 0) {
  Failure f;
  f.attempt = attempt;
  f.rank = rank;
  f.local_rank = rank % 2;
  f.exit_code = code;
  f.time = "00:00:0" + std::to_string(rank % 10);
  return f;
}

rdzv::Message fail_message(const Failure& f) { return rdzv::Fail{f}.to_message(); }

// A hang report: its culprit `rank`, stalled in `stalled_in` at `step`.
rdzv::Message hang_report(std::uint32_t rank, StalledIn stalled_in, std::uint64_t step,
                          std::vector<std::uint32_t> stalled) {
  Failure f = failure(rank, 134);
  f.kind = FailureKind::Hung;
  f.hang = HangFacts{10000, 1000 + rank, stalled_in, step, false, std::move(stalled), {}, false};
  return fail_message(f);
}

rdzv::Message stopped(std::uint32_t attempt = 0, std::string unhealthy = "") {
  return rdzv::Stopped{attempt, std::move(unhealthy)}.to_message();
}

// The coordinator's side of the hang watch: after a node's HANGING notice,
// other nodes' plain failures are consequences; the nodes' hang reports are
// compared (a rank behind beats one waiting in a collective); without a
// notice, a plain failure stops the job at once, as always.
START_TEST(the_coordinator_weighs_hang_reports_against_their_consequences) {
  Rig rig;
  auto& coordinator = rig.coordinator("hang.0", kSecretA, 3);
  FakeNodes nodes(rig, coordinator, "hang.0", kSecretA, 3);
  nodes.say(2, rdzv::Hanging{0}.to_message());
  const auto reset = fail_message(failure(2, 1));
  nodes.say(1, reset);  // its all-reduce broke when node 2 aborted its ranks
  CK_STR_EQ(FakeNodes::next(rig, *nodes.peers[0], milliseconds(300)), "<timeout>");  // no STOP for a consequence
  nodes.say(0, hang_report(0, StalledIn::collective, 50, {0, 1}));  // waits in a collective, at step 50
  nodes.say(2, hang_report(4, StalledIn::unknown, 49, {4, 5}));     // no stack, one step behind
  for (auto& p : nodes.peers) CK_STR_EQ(FakeNodes::next(rig, *p).substr(0, 4), "STOP");
  for (std::uint32_t node = 0; node < 3; ++node) nodes.say(node, stopped());
  for (int i = 0; i < 100 && !coordinator.verdict(); ++i) rig.turn();
  ck_assert(coordinator.verdict().has_value());
  ck_assert_int_eq(coordinator.verdict()->exit_code(), 134);
  const auto cause = cause_of(coordinator);
  CK_CONTAINS(cause, "worker rank 4 (local rank 0) on node 2 (n2) hung: no progress for 10 s (--ddp-hang-timeout; "
                     "no Python stack to tell where; at step 49 in its DDP_PROGRESS_FILE, the furthest behind)");
  CK_CONTAINS(cause, "stalled as well (they waited for it): node 0: ranks 0,1");

  auto& plain = rig.coordinator("plain.0", kSecretA, 2);
  FakeNodes others(rig, plain, "plain.0", kSecretA, 2);
  others.say(1, reset);
  CK_STR_EQ(FakeNodes::next(rig, *others.peers[0]).substr(0, 4), "STOP");
}
END_TEST

// Spares and an elastic minimum (roster.hpp) as the coordinator plays them:
// a lost node's group goes to the spare and everyone restarts with the same
// world; a lost spare stops nothing; without a spare, --ddp-min-nodes shrinks
// the world; below it, the run ends naming the lost node and why.
START_TEST(the_coordinator_gives_a_lost_nodes_place_to_a_spare) {
  Rig rig;
  const auto spares = [](NodePlan& c) {
    c.spares = 1;
    c.max_restarts = 3;
  };
  auto& coordinator = rig.coordinator("spare.0", kSecretA, 4, milliseconds(5000), 64, spares);
  FakeNodes nodes(rig, coordinator, "spare.0", kSecretA, 4, "groups=0-2 counts=2x3");
  nodes.drop(2);
  for (const std::uint32_t node : {0u, 1u, 3u}) CK_STR_EQ(FakeNodes::next(rig, *nodes.peers[node]), "STOP attempt=0");
  nodes.say(0, stopped());
  nodes.say(1, stopped());  // the spare ran nothing: not waited for
  for (const std::uint32_t node : {0u, 1u, 3u}) {
    const auto start = FakeNodes::next(rig, *nodes.peers[node]);
    CK_CONTAINS(start, "START attempt=1 ");
    CK_CONTAINS(start, "groups=0,1,3 counts=2x3");
  }
  // No spare left and no minimum: the run ends, naming the lost node.
  nodes.drop(1);
  CK_STR_EQ(FakeNodes::next(rig, *nodes.peers[0]), "STOP attempt=1");
  nodes.say(0, stopped(1));
  nodes.say(3, stopped(1));
  for (int i = 0; i < 100 && !coordinator.verdict(); ++i) rig.turn();
  ck_assert(coordinator.verdict().has_value());
  ck_assert_int_eq(coordinator.verdict()->exit_code(), 1);
  CK_CONTAINS(cause_of(coordinator), "node 1 (n1, 10.0.0.1) was lost: its agent's connection ended");
  CK_CONTAINS(cause_of(coordinator), "(attempt 1); no spare node left (--ddp-spares;");

  // A lost spare: nothing stops, and the run still ends well.
  auto& quiet_loss = rig.coordinator("spare.1", kSecretA, 3, milliseconds(5000), 64, spares);
  FakeNodes three(rig, quiet_loss, "spare.1", kSecretA, 3, "groups=0,1 counts=2,2");
  three.drop(2);
  CK_STR_EQ(FakeNodes::next(rig, *three.peers[0], milliseconds(300)), "<timeout>");
  three.say(1, rdzv::Finished{0}.to_message());
  CK_STR_EQ(FakeNodes::next(rig, *three.peers[1]), "BYE");
  three.say(0, rdzv::Finished{0}.to_message());
  CK_STR_EQ(FakeNodes::next(rig, *three.peers[0]), "DONE");  // success: no root cause

  // A node whose HealthCheck failed after its worker failed: taken out (BYE,
  // its agent ends well), the spare takes its group.
  auto& health = rig.coordinator("health.0", kSecretA, 3, milliseconds(5000), 64, spares);
  FakeNodes sick(rig, health, "health.0", kSecretA, 3, "groups=0,1 counts=2,2");
  const auto crash = fail_message(failure(3, 3));
  sick.say(1, crash);
  for (const std::uint32_t node : {0u, 1u, 2u}) CK_STR_EQ(FakeNodes::next(rig, *sick.peers[node]), "STOP attempt=0");
  sick.say(0, stopped());
  sick.say(1, stopped(0, "its HealthCheck /x failed: GPU 1: uncorrectable ECC errors"));
  CK_STR_EQ(FakeNodes::next(rig, *sick.peers[1]), "BYE");
  const auto restart = FakeNodes::next(rig, *sick.peers[2]);
  CK_CONTAINS(restart, "START attempt=1 ");
  CK_CONTAINS(restart, "groups=0,2 counts=2,2");

  // Its cause quotes its own failure, not the one that came first from
  // another node; with no restart left the run ends there.
  auto& last = rig.coordinator("health.1", kSecretA, 3, milliseconds(5000), 64,
                               [](NodePlan& c) { c.spares = 1; });
  FakeNodes once(rig, last, "health.1", kSecretA, 3, "groups=0,1 counts=2,2");
  once.say(0, fail_message(failure(0, 1)));
  once.say(1, crash);
  once.say(0, stopped());
  once.say(1, stopped(0, "its HealthCheck /x failed: GPU 1: uncorrectable ECC errors"));
  for (int i = 0; i < 100 && !last.verdict(); ++i) rig.turn();
  ck_assert(last.verdict().has_value());
  const auto unhealthy = cause_of(last);
  CK_CONTAINS(unhealthy, "node 1 (n1, 10.0.0.1) is unhealthy, taken out of the step: its HealthCheck /x failed");
  CK_CONTAINS(unhealthy, "(its own failure before: worker rank 3 (local rank 1) on node 1 (n1) exited with "
                         "code 3 at 00:00:03)");
  CK_CONTAINS(unhealthy, "no restart left to go on (--ddp-restarts=0)");

  // --ddp-min-nodes=1 without spares: one node fewer, the world halved.
  auto& elastic = rig.coordinator("elastic.0", kSecretA, 2, milliseconds(5000), 64, [](NodePlan& c) {
    c.min_nodes = 1;
    c.max_restarts = 1;
  });
  FakeNodes two(rig, elastic, "elastic.0", kSecretA, 2, "groups=0,1 counts=2,2");
  two.drop(1);
  CK_STR_EQ(FakeNodes::next(rig, *two.peers[0]), "STOP attempt=0");
  two.say(0, stopped());
  CK_STR_EQ(FakeNodes::next(rig, *two.peers[0]), "START attempt=1 master_addr=127.0.0.1 master_port=1 groups=0 counts=2");
}
END_TEST

// Slurm's stop (scancel, preemption) signals every node's agent, in no set
// order. A node whose agent ends first said SIGNALLED before its connection
// ended: the run ends as Slurm's stop, not a lost node, and is not restarted;
// a worker killed by the signal before it was heard of gives way to it.
START_TEST(a_signalled_node_that_leaves_is_slurms_stop_not_a_loss) {
  Rig rig;
  const auto restarts = [](NodePlan& c) { c.max_restarts = 3; };
  auto& coordinator = rig.coordinator("sig.0", kSecretA, 2, milliseconds(5000), 64, restarts);
  FakeNodes nodes(rig, coordinator, "sig.0", kSecretA, 2);
  nodes.say(1, rdzv::Signalled{SIGTERM}.to_message());
  nodes.drop(1);
  CK_STR_EQ(FakeNodes::next(rig, *nodes.peers[0]), "STOP attempt=0");
  nodes.say(0, stopped());
  for (int i = 0; i < 100 && !coordinator.verdict(); ++i) rig.turn();
  ck_assert(coordinator.verdict().has_value());
  ck_assert_int_eq(coordinator.verdict()->exit_code(), 128 + SIGTERM);
  const auto cause = cause_of(coordinator);
  CK_CONTAINS(cause, "node 1 (n1, 10.0.0.1): its agent received SIGTERM: Slurm is stopping the job or the step");
  CK_CONTAINS(cause, "class slurm_stop: Slurm ended the job or step; no restart");
  ck_assert_msg(cause.find("lost") == std::string::npos, "a lost node in: %s", cause.c_str());

  auto& killed_first = rig.coordinator("sig.1", kSecretA, 2, milliseconds(5000), 64, restarts);
  FakeNodes two(rig, killed_first, "sig.1", kSecretA, 2);
  Failure killed = failure(0, 128 + SIGTERM);
  killed.signal = SIGTERM;
  two.say(0, fail_message(killed));
  CK_STR_EQ(FakeNodes::next(rig, *two.peers[1]), "STOP attempt=0");
  two.say(1, rdzv::Signalled{SIGTERM}.to_message());
  two.drop(1);
  two.say(0, stopped());
  for (int i = 0; i < 100 && !killed_first.verdict(); ++i) rig.turn();
  CK_CONTAINS(cause_of(killed_first), "node 1 (n1, 10.0.0.1): its agent received SIGTERM");
  CK_CONTAINS(cause_of(killed_first), "(before Slurm's stop was heard of: worker rank 0 (local rank 0) on node 0 "
                                      "(n0) was killed by SIGTERM");
}
END_TEST

// Node 0's requeue runs Slurm's scontrol without blocking the loop: here a
// stand-in scontrol that records its arguments, one that refuses as
// slurmctld does for a job that may not be requeued, and one that is missing.
// A command that prints as fast as it can: each poll reads a bounded amount
// and returns (a poll that read until the command ended would, with `yes`,
// never return); at its deadline it is killed with what it started, and its
// answer is the first 64 KiB.
START_TEST(a_chatty_command_never_holds_the_loop) {
  agent::Command chatty;
  ck_assert(chatty.start({"/bin/sh", "-c", "sleep 300 & echo $!; exec yes"}, std::chrono::milliseconds(500), "").ok());
  std::optional<agent::Command::Outcome> outcome;
  int polls = 0;
  for (; polls < 3000 && !outcome; ++polls) {
    outcome = chatty.poll();
    if (!outcome) usleep(10000);
  }
  ck_assert_msg(outcome.has_value(), "no outcome after %d polls", polls);
  ck_assert(outcome->timed_out && !outcome->ok);
  ck_assert_uint_le(outcome->said.size(), agent::Command::kKeptBytes);
  // The background sleep was in its process group: killed too (gone, or a
  // zombie, within moments: SIGKILL is delivered, not yet acted on, when
  // kill() returns).
  const auto first = outcome->said.substr(0, outcome->said.find('\n'));
  std::string state;
  for (int i = 0; i < 200 && state != "Z" && state != "gone"; ++i, usleep(10000)) {
    std::ifstream stat("/proc/" + first + "/stat");
    std::string pid, comm;
    if (!(stat >> pid >> comm >> state)) state = "gone";
  }
  ck_assert_msg(state == "Z" || state == "gone", "the background sleep is still in state %s", state.c_str());
}
END_TEST

// A question to slurmctld outlives the step's SIGTERM when asked to (Slurm
// signals every process of a stopped step, the agent's scontrol too); one that
// obeys dies of it, and says so.
START_TEST(a_command_can_outlive_slurms_stop_signal) {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "kill -TERM $$; kill -INT $$; echo answered"};
  const auto run = [&](agent::Command::StopSignals stop) {
    agent::Command c;
    ck_assert(c.start(argv, std::chrono::milliseconds(5000), "", nullptr, stop).ok());
    std::optional<agent::Command::Outcome> outcome;
    for (int polls = 0; polls < 500 && !outcome; ++polls) {
      outcome = c.poll();
      if (!outcome) usleep(10000);
    }
    ck_assert(outcome.has_value());
    return *outcome;
  };
  const auto shielded = run(agent::Command::StopSignals::Ignore);
  ck_assert(shielded.ok);
  CK_STR_EQ(shielded.said, "answered");
  const auto plain = run(agent::Command::StopSignals::Obey);
  ck_assert(!plain.ok && !plain.timed_out);
  CK_STR_EQ(plain.said, "killed by SIGTERM");
}
END_TEST

// After Slurm's warning, node 0 waits for the workers at most RequeueWait,
// cut to the job's end (its EndTime) less KillWait and a 5 s margin.
START_TEST(the_requeue_wait_ends_before_the_job_does) {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const std::time_t at_end = 1795000000;
  const std::string show = "RUNNING|1795000000|N/A|None";  // squeue's STATE|END|PREEMPT|REASON
  const auto left = [](const std::string& line, std::time_t now) {
    return agent::time_left_of(*agent::job_fields_from_squeue(line), now);
  };
  ck_assert(left(show, at_end - 55) == seconds(55));
  ck_assert(left(show, at_end + 3) == seconds(0));  // Slurm enforces the limit late
  ck_assert(!left("RUNNING|NONE|N/A|None", at_end));  // no time limit
  ck_assert(!agent::job_fields_from_squeue("slurm_load_jobs error: Invalid job id specified"));
  // 55 s left, KillWait 30 s: 20 s of the 60 s RequeueWait; none left: at once; no end: all of it.
  ck_assert(agent::requeue_wait_within(milliseconds(60000), seconds(55), seconds(30)) == milliseconds(20000));
  ck_assert(agent::requeue_wait_within(milliseconds(60000), seconds(20), seconds(30)) == milliseconds(0));
  ck_assert(agent::requeue_wait_within(milliseconds(60000), seconds(600), seconds(30)) == milliseconds(60000));
  ck_assert(agent::requeue_wait_within(milliseconds(60000), std::nullopt, seconds(30)) == milliseconds(60000));
}
END_TEST

START_TEST(requeue_runs_scontrol_and_reports_its_answer) {
  const auto dir = scratch();
  const auto fake = [&](const std::string& name, const std::string& body) {
    const auto path = dir + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
  };
  const auto wait = [](agent::Requeue& r) {
    for (int i = 0; i < 500; ++i) {
      if (auto done = r.poll()) return *done;
      usleep(10000);
    }
    ck_abort_msg("scontrol did not finish");
    return Status(Ok{});
  };
  agent::Requeue ok;
  ck_assert(ok.start("4242_1", fake("ok", "echo \"$@\" > " + dir + "/args")).ok());
  ck_assert(ok.running());
  ck_assert(wait(ok).ok());
  CK_STR_EQ(slurp(dir + "/args"), "requeue 4242_1\n");

  agent::Requeue refused;
  ck_assert(
      refused
          .start("7", fake("no", "echo 'slurm_requeue error: Requested operation is presently disabled' >&2; exit 1"))
          .ok());
  const auto r = wait(refused);
  ck_assert(!r.ok());
  CK_STR_EQ(r.error(), "scontrol requeue 7: slurm_requeue error: Requested operation is presently disabled");

  agent::Requeue missing;
  ck_assert(missing.start("7", dir + "/no-such-scontrol").ok());
  const auto m = wait(missing);
  ck_assert(!m.ok());
  CK_CONTAINS(m.error(), "is slurm-client installed on node 0?");

  fs::remove_all(dir);
}
END_TEST

// Heartbeats once a second up to 4,096 nodes; then fewer, so that node 0
// handles about 4,096 a second each way, but never fewer than three per
// heartbeat timeout; and both sides take the same rule from the plan.
START_TEST(heartbeats_slow_down_with_the_nodes_but_three_fit_the_timeout) {
  using namespace ddp::agent;
  using std::chrono::milliseconds;
  ck_assert_int_eq(heartbeat_interval(2, milliseconds(5000)).count(), 1000);
  ck_assert_int_eq(heartbeat_interval(4096, milliseconds(60000)).count(), 1000);
  ck_assert_int_eq(heartbeat_interval(8192, milliseconds(60000)).count(), 2000);
  ck_assert_int_eq(heartbeat_interval(16384, milliseconds(60000)).count(), 4000);
  ck_assert_int_eq(heartbeat_interval(16384, milliseconds(10000)).count(), 3333);
  ck_assert_int_eq(heartbeat_interval(16384, milliseconds(5000)).count(), 1666);
  ck_assert_int_eq(heartbeat_interval(16384, milliseconds(2000)).count(), 1000);  // a short timeout: 1 s still
  NodePlan plan;
  plan.nnodes = 16384;
  plan.heartbeat_timeout_ms = 10000;
  plan.master_addr = "127.0.0.1";
  const auto client = ClientConfig::for_plan(plan, "s", false, "h", {});
  EventLoop loop;
  const Coordinator coordinator(loop, plan, CoordinatorSettings::for_plan(plan, "s", false, "h"));
  ck_assert_int_eq(client.heartbeat_every.count(), 3333);
  ck_assert_int_eq(coordinator.heartbeat_every().count(), 3333);
}
END_TEST

// After the handshake every line is sealed: an unsealed STOPPED naming the
// node unhealthy, a forged one, and a replay of the node's own sealed line
// are dropped and named in node 0's log; the node stays in, and its real
// lines that follow still count.
START_TEST(lines_that_do_not_open_are_dropped_and_named) {
  CapturedLog log;
  {
    Rig rig;
    auto& c = rig.coordinator("in.0", kSecretA, 2);
    FakeNodes nodes(rig, c, "in.0", kSecretA, 2);
    auto& node1 = *nodes.peers[1];
    const std::string forged = "STOPPED attempt=0 unhealthy=injected";
    node1.send_raw(forged + "\n");                                         // no seal
    node1.send_raw(forged + " seq=2 mac=" + std::string(64, '0') + "\n");  // a made-up one
    rdzv::Seal other(std::string(64, 'f'), rdzv::Seal::Side::Agent);       // another session's key
    node1.send_raw(other.close(forged) + "\n");
    rig.pump(milliseconds(300));
    ck_assert(!c.verdict());
    CK_STR_EQ(FakeNodes::next(rig, *nodes.peers[0], milliseconds(500)), "<timeout>");  // no STOP
    node1.send(rdzv::encode(rdzv::Finished{0}.to_message()));  // the real line after them opens
    nodes.peers[0]->send(rdzv::encode(rdzv::Finished{0}.to_message()));
    for (int i = 0; i < 200 && !c.verdict(); ++i) rig.turn();
    ck_assert(c.verdict() && c.verdict()->exit_code() == 0);
  }
  const auto text = log.text();
  CK_CONTAINS(text, "rendezvous: dropped a message from node 1 (127.0.0.1:");
  CK_CONTAINS(text, "a message without its seal: 'STOPPED attempt=0 unhealthy=injected'");
  CK_CONTAINS(text, "whose seal does not verify (forged or altered on the way)");
}
END_TEST

// Any message counts as a heartbeat (heartbeat.hpp), so node 0 sends one to
// a node only once it has sent it nothing for an interval, each node on its
// own schedule: one welcomed 600 ms after another hears its first heartbeat
// 600 ms later (a broadcast every interval would send both theirs at once).
START_TEST(node_0_heartbeats_each_node_an_interval_after_its_last_message) {
  Rig rig;
  auto& a = rig.coordinator("hb.0", kSecretA, 3);  // three nodes: no START while two are in
  const auto admit = [&](Peer& p, std::uint32_t node) {
    const auto s = p.challenge(rig, "hb.0");
    const auto r = response(p, kSecretA, "hb.0", node, s);
    p.send(r);
    ck_assert(welcomed(p, p.line(rig), kSecretA, "hb.0", node, s, r));
  };
  Peer first(a.port()), second(a.port());
  admit(first, 1);
  rig.pump(milliseconds(600));
  admit(second, 2);
  CK_STR_EQ(first.line(rig, milliseconds(1000)), "HB");         // 1 s after its WELCOME
  CK_STR_EQ(second.line(rig, milliseconds(200)), "<timeout>");  // not yet: 1 s after its own
  CK_STR_EQ(second.line(rig, milliseconds(1500)), "HB");
}
END_TEST

// The agent's side of the rule: while it reports something within each
// interval (LOAD here, as the straggler watch does), it sends no heartbeat;
// silent, one an interval later.
START_TEST(an_agent_heartbeats_only_when_it_has_said_nothing_else) {
  Rig rig;
  FakeCoordinator fake;
  const auto lost = fake.client(rig, "hb.1");
  Peer node0(fake.accept(rig));
  const auto snonce = rdzv::random_hex(rdzv::kNonceBytes);
  node0.send(rdzv::encode(rdzv::Challenge{rdzv::kProtocolVersion, "9.9.9", "hb.1", snonce}.to_message()));
  const auto r = rdzv::decode(node0.line(rig));
  ck_assert(r.ok() && r->verb == "RESPONSE");
  const auto cnonce = r->get("cnonce").value_or("");
  const auto f = facts(node0, kSecretA, "hb.1", 1, snonce, cnonce);
  node0.send(rdzv::encode(rdzv::Welcome{rdzv::server_proof(f)}.to_message()));
  node0.seal(rdzv::session_key(f), rdzv::Seal::Side::Node0);
  CK_STR_EQ(node0.line(rig).substr(0, 4), "JOIN");
  for (int i = 0; i < 6; ++i) {  // 2.4 s: two heartbeats and more, were they sent every second regardless
    rig.clients.back().report_load(rdzv::Load{0, 400, {100}, {0}, std::nullopt});
    CK_STR_EQ(node0.line(rig).substr(0, 4), "LOAD");
    CK_STR_EQ(node0.line(rig, milliseconds(400)), "<timeout>");
  }
  CK_STR_EQ(node0.line(rig, milliseconds(1500)), "HB");
  CK_STR_EQ(lost->c_str(), "");
}
END_TEST

// --ddp-preflight's GEMM: a node slow in both rounds is checked once more,
// alone, before it is named. At the others' rate then (a burst on its host,
// over), it is not named and every node gets START; slow a third time, it
// is (swap, and no spare: the run ends naming it).
START_TEST(a_node_slow_in_both_gemms_is_checked_once_more_before_it_is_named) {
  quiet();
  for (const bool slow_again : {false, true}) {
    Rig rig;
    auto& c = rig.coordinator("pf.0", kSecretA, 4, milliseconds(5000), 64,
                              [](NodePlan& cc) { cc.preflight = PreflightAction::Swap; });
    std::vector<std::unique_ptr<Peer>> nodes;
    for (std::uint32_t n = 0; n < 4; ++n) {
      auto& p = *nodes.emplace_back(std::make_unique<Peer>(c.port()));
      const auto s = p.challenge(rig, "pf.0");
      const auto r = response(p, kSecretA, "pf.0", n, s);
      p.send(r);
      ck_assert(welcomed(p, p.line(rig), kSecretA, "pf.0", n, s, r));
      const auto id = std::to_string(n);
      p.send(
          rdzv::encode(rdzv::Join{1, {}, "n" + id, "10.0.0." + id, ""}.to_message()));  // no check port: no transfers
    }
    const auto gemm = [&](std::uint32_t n, std::uint64_t mflops) {
      CK_STR_EQ(FakeNodes::next(rig, *nodes[n]).substr(0, 8), "CHECKCPU");
      nodes[n]->send(rdzv::encode(rdzv::Checked{"compute", mflops, ""}.to_message()));
    };
    for (int round = 0; round < 2; ++round)
      for (std::uint32_t n = 0; n < 4; ++n) gemm(n, n == 3 ? 100000 : 180000 + 1000 * n);
    gemm(3, slow_again ? 100000 : 181000);  // node 3 alone
    if (!slow_again) {
      for (auto& p : nodes) CK_STR_EQ(FakeNodes::next(rig, *p).substr(0, 5), "START");
      ck_assert(!c.verdict());
      continue;
    }
    for (int i = 0; i < 100 && !c.verdict(); ++i) rig.turn();
    CK_CONTAINS(cause_of(c), "slow in the pre-flight (--ddp-preflight=swap): its GEMM ran at 100.0 GFLOP/s");
  }
}
END_TEST

Suite* agent_suite() {
  return make_suite("agent",
                    {all_workers_succeed_with_their_ranks,
                     one_failure_stops_the_others_and_sets_the_exit_code,
                     a_worker_killed_by_a_signal_gives_128_plus_signal,
                     restarts_run_a_new_attempt_with_the_count,
                     a_command_that_cannot_be_executed_ends_at_once_as_setup,
                     a_response_from_another_job_is_refused,
                     a_response_replayed_on_a_new_connection_is_refused,
                     the_client_refuses_a_welcome_replayed_on_a_new_connection,
                     a_node_of_another_version_ends_the_rendezvous_naming_both,
                     the_client_answers_another_version_and_names_both,
                     a_proof_made_for_another_port_or_address_is_refused,
                     a_relayed_answer_to_an_older_challenge_does_not_end_the_step,
                     lines_that_do_not_open_are_dropped_and_named,
                     a_squatter_on_the_first_port_costs_the_agent_one_port,
                     malformed_input_closes_only_that_connection,
                     idle_connections_time_out_and_the_oldest_are_shed,
                     one_connection_per_address_is_given_time_to_answer,
                     the_waiting_connections_are_kept_by_age_and_counted_by_address,
                     out_of_descriptors_the_oldest_stranger_is_shed,
                     a_flood_is_logged_in_a_few_lines,
                     requeue_runs_scontrol_and_reports_its_answer,
                     a_chatty_command_never_holds_the_loop,
                     a_command_can_outlive_slurms_stop_signal,
                     the_requeue_wait_ends_before_the_job_does,
                     find_hang_orders_the_stalled_ranks_by_silence,
                     read_progress_takes_a_step_number_or_none,
                     the_culprit_is_the_stalled_rank_outside_a_collective,
                     a_silent_worker_is_named_as_the_hang,
                     the_coordinator_weighs_hang_reports_against_their_consequences,
                     the_coordinator_gives_a_lost_nodes_place_to_a_spare,
                     a_signalled_node_that_leaves_is_slurms_stop_not_a_loss,
                     in_a_collective_hang_the_rank_silent_longest_is_named,
                     a_script_that_never_signals_progress_is_told_how,
                     without_a_hang_timeout_nothing_is_watched,
                     heartbeats_slow_down_with_the_nodes_but_three_fit_the_timeout,
                     node_0_heartbeats_each_node_an_interval_after_its_last_message,
                     an_agent_heartbeats_only_when_it_has_said_nothing_else,
                     a_node_slow_in_both_gemms_is_checked_once_more_before_it_is_named},
                    30);
}
