// The pre-flight under way (--ddp-preflight, preflight.hpp's rule): once
// every node has joined and before attempt 0's START, node 0 sends the turns
// of checks (CHECKCPU to each node of a compute turn, CHECKNET to each
// transfer's sender), gathers each node's figures (CHECKED), gives a turn
// 30 s at most, checks once more a node slow in both GEMMs, then judges and
// says what it found. What the named nodes lead to (a blame, or taken out for
// a spare) is the job's decision (job.hpp's PreflightDone). The orders go
// through `send`; the job tells which nodes are lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/rdzv_messages.hpp"
#include "job/job.hpp"
#include "job/preflight.hpp"

namespace ddp::agent {

class PreflightRun {
 public:
  using Clock = std::chrono::steady_clock;
  using Send = std::function<void(std::uint32_t node, const rdzv::Message&)>;
  struct Settings {
    std::uint32_t gemm_ms = 300;  // each node's GEMM, each round
    // Each transfer, each round: 250 ms, less when there are many turns of
    // them (nodes that share a machine take turns): about 10 s in all, 50 ms
    // at least. 0: that rule.
    std::uint32_t send_ms = 0;
    bool verbose = false;  // --ddp-verbose: the turns, every node's figures
  };

  // `job` (every node joined) names the nodes, their hosts, addresses and
  // check ports, and which are lost.
  PreflightRun(const job::Job& job, Settings settings, Send send);

  // Each returns the verdicts once, when the last turn is done (the nodes
  // named: none when all is well).
  // The first turn's orders.
  std::optional<std::vector<PreflightVerdict>> begin(Clock::time_point now);
  // A node's CHECKED.
  std::optional<std::vector<PreflightVerdict>> on_checked(std::uint32_t node, const rdzv::Checked& checked,
                                                          Clock::time_point now);
  // Lost nodes dropped from the turn, late checks failed at the deadline.
  std::optional<std::vector<PreflightVerdict>> tick(Clock::time_point now);

 private:
  void next_turn(Clock::time_point now);
  void send_turn(const PreflightTurn& turn);
  void record_check(std::uint32_t node, CheckResult result);
  void record_transfer(const std::string& token, std::optional<CheckResult> result);
  void end_turn_if_done(Clock::time_point now);
  std::vector<PreflightVerdict> judge();

  const job::Job& job_;
  Settings settings_;
  Send send_;
  std::vector<PreflightTurn> turns_;
  std::size_t turn_ = 0;
  Clock::time_point began_, turn_deadline_;
  std::vector<std::uint32_t> waiting_;         // compute: the current turn's nodes that have not answered
  std::map<std::string, Transfer> transfers_;  // network: the current turn's not yet timed, by token
  std::map<std::uint32_t, CheckResult> compute_;
  std::vector<TimedTransfer> timed_;  // every transfer's figure (or failure)
  bool confirmed_ = false;            // the slow GEMMs were checked once more (confirmation_turns)
  bool judged_ = false;                                  // every turn is done
  std::optional<std::vector<PreflightVerdict>> verdicts_;  // judged, not yet returned
};

}  // namespace ddp::agent
