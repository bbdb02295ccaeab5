// The agent's state machine with real processes (sh), no Slurm.
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent.hpp"
#include "ddp/rdzv_protocol.hpp"
#include "suites.hpp"

using namespace ddp;
namespace fs = std::filesystem;

namespace {

agent::AgentConfig config(std::uint32_t nproc, std::string script, std::uint32_t restarts = 0) {
  agent::AgentConfig c;
  c.plan.run_id = "unit";
  c.plan.nproc = c.plan.world_size = nproc;
  c.plan.master_addr = "127.0.0.1";
  c.plan.master_port = agent::free_port("127.0.0.1");
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

START_TEST(missing_command_is_127) {
  quiet();
  auto c = config(1, "");
  c.command = {"/nonexistent/ddp-no-such-program"};
  ck_assert_int_eq(agent::run_agent(c), 127);
}
END_TEST

Suite* agent_suite() {
  return make_suite("agent",
                    {all_workers_succeed_with_their_ranks, one_failure_stops_the_others_and_sets_the_exit_code,
                     a_worker_killed_by_a_signal_gives_128_plus_signal, restarts_run_a_new_attempt_with_the_count,
                     missing_command_is_127},
                    30);
}
