// Ports that never collide (ddp/plan/ports.hpp, ddp/node/port_claim.hpp):
// where a step looks, and the claims on node 0 that decide what it gets. The
// claims are real (abstract Unix sockets in this process's network
// namespace), in a range nothing else here uses.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "ddp/node/port_claim.hpp"
#include "ddp/plan/ports.hpp"
#include "suites.hpp"

using namespace ddp;

namespace {
// 40 ports of this run's own in 10000-29999 (below the ephemeral ports).
std::uint16_t base() {
  static const auto first = std::uint16_t(10000 + ::getpid() % 500 * 40);
  return first;
}
PortRange sixteen() { return {base(), std::uint16_t(base() + 15)}; }
std::string text(PortRange r) { return std::to_string(r.first) + "-" + std::to_string(r.last); }
}  // namespace

// Property: whatever the range, start and limit, the candidates are distinct,
// inside the range, begin at the start, and are as many as the range allows.
START_TEST(candidates_are_distinct_inside_the_range_from_the_start) {
  std::mt19937 random(1234);
  for (int round = 0; round < 2000; ++round) {
    const auto first = std::uint16_t(1024 + random() % 60000);
    const auto last = std::uint16_t(std::min<std::uint32_t>(65535, first + random() % 3000));
    const PortRange range{first, last};
    const auto start = std::uint16_t(first + random() % range.size());
    const auto limit = std::uint32_t(1 + random() % 100);
    const auto ports = port_candidates(range, start, limit);
    ck_assert_uint_eq(ports.size(), std::min(range.size(), limit));
    ck_assert_uint_eq(ports.front(), start);
    ck_assert_uint_eq(std::set<std::uint16_t>(ports.begin(), ports.end()).size(), ports.size());
    for (const auto p : ports) ck_assert(p >= first && p <= last);
  }
  ck_assert(port_candidates({1100, 1109}, 5000, 3) == std::vector<std::uint16_t>{5000});  // chosen by hand
}
END_TEST

START_TEST(a_fixed_port_is_the_only_candidate) {
  NodePlan plan;
  plan.port_range = {20000, 20015};
  plan.master_port = 29500;
  plan.master_port_fixed = true;
  ck_assert(master_port_candidates(plan, 3) == std::vector<std::uint16_t>{29500});
  plan.master_port_fixed = false;
  plan.master_port = 20002;
  ck_assert_uint_eq(master_port_candidates(plan, 0).size(), 16);
  plan.rdzv_port = 20010;
  ck_assert_uint_eq(rdzv_candidates(plan).front(), 20010);
  ck_assert_uint_eq(rdzv_candidates(plan).size(), 16);
  // --ddp-port inside the range is the workers': never the rendezvous's.
  plan.master_port = 20011;
  plan.master_port_fixed = true;
  const auto rdzv = rdzv_candidates(plan);
  ck_assert_uint_eq(rdzv.size(), 15);
  ck_assert(std::find(rdzv.begin(), rdzv.end(), 20011) == rdzv.end());
}
END_TEST

// Property, on real claims: steps arriving in random order on one node 0 with
// a 16-port range, each claiming its rendezvous port, then MASTER_PORT per
// attempt (a restart claims the next before it lets the last go), ending at
// random; a quarter of them with --ddp-port (a restart gives its port back and
// claims it again). No port is ever held by two steps; a step finds its rendezvous port
// among the candidates its other nodes try; a step that finds the range full
// gets the error naming it, never a port another step holds.
START_TEST(steps_sharing_node_0_never_share_a_port) {
  struct Step {
    NodePlan plan;
    PortClaim rdzv, master;
    std::uint32_t attempt = 0;
  };
  std::mt19937 random(99);
  std::map<int, Step> live;
  int refused = 0;
  for (int event = 0; event < 3000; ++event) {
    const auto action = random() % 3;
    const PortRange range = sixteen();
    if (action == 0 || live.empty()) {  // a step starts
      Step s;
      s.plan.port_range = range;
      s.plan.job_id = std::uint32_t(random() % 50);
      s.plan.step_id = std::uint32_t(random() % 4);
      s.plan.rdzv_port = derive_rdzv_port(range, s.plan.job_id, s.plan.step_id);
      s.plan.master_port = derive_port(range, s.plan.job_id, s.plan.step_id, 0);
      s.plan.master_port_fixed = random() % 4 == 0;
      if (s.plan.master_port_fixed) s.plan.master_port = std::uint16_t(range.first + random() % 16);
      auto rdzv = claim_first_free("the rendezvous port", range, rdzv_candidates(s.plan), std::nullopt);
      if (!rdzv) {
        ++refused;
        CK_CONTAINS(rdzv.error(), "PortRange=" + text(range) + " (16 ports)");
        continue;
      }
      auto master = claim_first_free("MASTER_PORT", range, master_port_candidates(s.plan, 0), std::nullopt,
                                     s.plan.master_port_fixed);
      if (!master) {
        ++refused;
        CK_CONTAINS(master.error(), s.plan.master_port_fixed ? "(--ddp-port) is in use on node 0 by another "
                                                               "slurm-ddp step" : "(16 ports)");
        continue;
      }
      s.rdzv = std::move(rdzv).value();
      s.master = std::move(master).value();
      const auto tried = rdzv_candidates(s.plan);
      ck_assert(std::find(tried.begin(), tried.end(), s.rdzv.port()) != tried.end());
      live.emplace(event, std::move(s));
    } else {
      auto it = std::next(live.begin(), long(random() % live.size()));
      if (action == 1) {
        live.erase(it);  // the step ends: its claims go with it
      } else {           // a restart, as Coordinator::start_attempt does it
        Step& s = it->second;
        s.master = PortClaim{};
        auto next = claim_first_free("MASTER_PORT", range, master_port_candidates(s.plan, ++s.attempt), std::nullopt,
                                     s.plan.master_port_fixed);
        if (!next) {  // only when a neighbour took the range's last port meanwhile, never a fixed one's own
          ck_assert(!s.plan.master_port_fixed);
          live.erase(it);
          continue;
        }
        s.master = std::move(next).value();
      }
    }
    std::set<std::uint16_t> held;
    for (const auto& [id, s] : live) {
      ck_assert(held.insert(s.rdzv.port()).second);
      ck_assert(held.insert(s.master.port()).second);
      if (s.plan.master_port_fixed) ck_assert_uint_eq(s.master.port(), s.plan.master_port);
    }
    ck_assert_uint_le(held.size(), 16);
  }
  ck_assert_int_gt(refused, 0);  // the range did fill up, and said so
}
END_TEST

START_TEST(a_claimed_port_names_its_holder) {
  auto mine = claim_port(std::uint16_t(base() + 20), std::nullopt);
  ck_assert(std::holds_alternative<PortClaim>(mine));
  auto again = claim_port(std::uint16_t(base() + 20), std::nullopt);
  ck_assert(std::holds_alternative<PortRefusal>(again));
  ck_assert(std::get<PortRefusal>(again).holder == PortRefusal::Holder::SlurmDdpStep);
  CK_STR_EQ(std::get<PortRefusal>(again).who, "this step");
  // Another process's claim: named by pid.
  int ready[2];
  ck_assert_int_eq(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    auto held = claim_port(std::uint16_t(base() + 21), std::nullopt);
    [[maybe_unused]] auto w = ::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ck_assert_int_eq(::read(ready[0], &c, 1), 1);
  auto theirs = claim_port(std::uint16_t(base() + 21), std::nullopt);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ck_assert(std::holds_alternative<PortRefusal>(theirs));
  // Not a step (slurmstepd did not start it): named as such, with pid and user.
  ck_assert(std::get<PortRefusal>(theirs).holder == PortRefusal::Holder::OtherProcess);
  CK_CONTAINS(describe_holder(std::get<PortRefusal>(theirs)),
              "a process that is not a slurm-ddp step (pid " + std::to_string(child) + ", user ");
  CK_CONTAINS(std::get<PortRefusal>(theirs).who, "holding the port's claim name");
  // Its holder gone, the port is free again: nothing to clean up.
  ck_assert(std::holds_alternative<PortClaim>(claim_port(std::uint16_t(base() + 21), std::nullopt)));
  ::close(ready[0]);
  ::close(ready[1]);
}
END_TEST

// Anyone may bind a claim's name, listening or not: such a holder is named
// (pid and user) as a process that is not a slurm-ddp step, also in the
// error of a full range, and never counted among the steps.
START_TEST(a_claim_name_bound_by_another_process_is_named_as_not_a_step) {
  const auto port = std::uint16_t(base() + 22);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t length = 0;
  const sockaddr_un addr = claim_address(port, length);
  ck_assert_int_eq(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), length), 0);  // never listens
  auto refused = claim_port(port, std::nullopt);
  ck_assert(std::holds_alternative<PortRefusal>(refused));
  const auto& refusal = std::get<PortRefusal>(refused);
  ck_assert(refusal.holder == PortRefusal::Holder::OtherProcess);
  // This process (pid and user: /proc shows its own descriptors) or, where
  // /proc does not, its user from the kernel's sock_diag.
  CK_CONTAINS(refusal.who, user_text(::geteuid()) + ", holding the port's claim name without listening");
  CK_CONTAINS(refusal.who, "pid " + std::to_string(::getpid()) + ", ");
  auto full = claim_first_free("the rendezvous port", {port, port}, {port}, std::nullopt);
  CK_CONTAINS(full.error(), "0 held by other slurm-ddp steps, 1 by other processes (" + std::to_string(port) + ": pid ");
  // Unnamed (past the first few of a search): still not counted as a step.
  auto quiet = claim_port(port, std::nullopt, false);
  ck_assert(std::get<PortRefusal>(quiet).holder == PortRefusal::Holder::OtherProcess);
  ::close(fd);
}
END_TEST

// A step's claim is held by slurmstepd (real uid 0: the task shape) or by a
// process it started (node 0's agent); a name is anyone's to choose.
START_TEST(a_step_is_told_by_slurmstepd_s_real_uid_not_by_names) {
  const ProcessFacts stepd{"slurmstepd", 0, 1}, agent{"ddp-agent", 1001, 42}, fake{"slurmstepd", 1001, 7};
  ck_assert(is_step_process(stepd, ProcessFacts{"slurmd", 0, 1}));
  ck_assert(is_step_process(agent, stepd));
  ck_assert(!is_step_process(agent, fake));                       // a user's process named slurmstepd
  ck_assert(!is_step_process(fake, ProcessFacts{"bash", 1001, 1}));
  ck_assert(!is_step_process(agent, std::nullopt));               // its parent gone or hidden
  ck_assert(!is_step_process(ProcessFacts{"sleep", 0, 1}, ProcessFacts{"sudo", 0, 1}));  // root, not Slurm's
  // This process: read from /proc, not a step.
  const auto self = process_facts(::getpid());
  ck_assert(self.has_value());
  ck_assert_int_eq(self->parent, ::getppid());
  ck_assert_int_eq(int(self->real_uid), int(::getuid()));
  ck_assert(!is_step_process(*self, process_facts(self->parent)));
}
END_TEST

START_TEST(a_port_another_process_listens_on_is_passed_and_named) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  const auto port = std::uint16_t(base() + 30);
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ck_assert_int_eq(::listen(fd, 1), 0);
  auto refused = claim_port(port, "127.0.0.1");
  ck_assert(std::holds_alternative<PortRefusal>(refused));
  ck_assert(std::get<PortRefusal>(refused).holder == PortRefusal::Holder::OtherProcess);
  CK_CONTAINS(std::get<PortRefusal>(refused).who, "pid " + std::to_string(::getpid()) + ", " +
                                                      user_text(::geteuid()) + ", listening");
  // The search moves past it; the user's own choice says who has it.
  const auto after = std::uint16_t(port + 1);
  auto next = claim_first_free("MASTER_PORT", {port, after}, {port, after}, "127.0.0.1");
  ck_assert(next.ok());
  ck_assert_uint_eq(next.value().port(), after);
  auto chosen = claim_first_free("MASTER_PORT", {port, port}, {port}, "127.0.0.1", true);
  CK_CONTAINS(chosen.error(), "MASTER_PORT " + std::to_string(port) +
                                  " (--ddp-port) is in use on node 0 by a process that is not a slurm-ddp step (pid ");
  CK_CONTAINS(chosen.error(), "choose another port with --ddp-port=PORT");
  ::close(fd);
}
END_TEST

START_TEST(a_full_range_is_named_with_its_holders_and_the_fix) {
  const std::vector<PortRefusal> refusals{{20000, PortRefusal::Holder::SlurmDdpStep, "pid 7, user alice"},
                                          {20001, PortRefusal::Holder::OtherProcess, "user bob (uid 1001), listening"}};
  const auto text = no_free_port("the rendezvous port", {20000, 20001}, refusals, PortRange{32768, 60999});
  CK_CONTAINS(text, "the rendezvous port: none of the 2 port(s) tried in PortRange=20000-20001 (2 ports) is free on "
                    "node 0: 1 held by other slurm-ddp steps, 1 by other processes (20001: user bob (uid 1001), "
                    "listening)");
  CK_CONTAINS(text, "widen PortRange in the site config");
  ck_assert(text.find("ephemeral") == std::string::npos);  // not overlapping: not mentioned
  const auto inside = no_free_port("MASTER_PORT", {40000, 40001}, refusals, PortRange{32768, 60999});
  CK_CONTAINS(inside, "overlaps the kernel's ephemeral ports (net.ipv4.ip_local_port_range 32768-60999) in "
                      "40000-40001");
  ck_assert(!ephemeral_overlap({20000, 29999}, {32768, 60999}));
  CK_CONTAINS(*ephemeral_overlap({30000, 40000}, {32768, 60999}), "in 32768-40000");
  CK_CONTAINS(*ephemeral_overlap({30000, 40000}, {32768, 60999}), "net.ipv4.ip_local_reserved_ports=30000-40000");
}
END_TEST

Suite* ports_suite() {
  return make_suite("ports", {candidates_are_distinct_inside_the_range_from_the_start, a_fixed_port_is_the_only_candidate,
                              steps_sharing_node_0_never_share_a_port, a_claimed_port_names_its_holder,
                              a_claim_name_bound_by_another_process_is_named_as_not_a_step,
                              a_step_is_told_by_slurmstepd_s_real_uid_not_by_names,
                              a_port_another_process_listens_on_is_passed_and_named,
                              a_full_range_is_named_with_its_holders_and_the_fix});
}
