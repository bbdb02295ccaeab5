// The coordinator's pre-flight (--ddp-preflight, preflight.hpp): once every
// node has joined and before attempt 0's START, the turns of checks, each
// node's figures, the verdict, and what it leads to (a warning and a blame,
// or the node taken out for a spare before any worker starts).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "rendezvous/coordinator.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kTurnTimeout{30};

std::uint32_t send_ms_for(std::size_t nodes) {
  const auto transfers = std::max<std::size_t>(1, (nodes - 1) * kRounds);
  return std::uint32_t(std::clamp<std::size_t>(10000 / transfers, 50, 250));
}
}  // namespace

void Coordinator::begin_preflight() {
  phase_ = Phase::Preflight;
  std::vector<std::string> hosts;
  for (const auto& n : nodes_) hosts.push_back(n.host);
  preflight_.emplace();
  preflight_->began = Clock::now();
  // Node 0's end of the network checks: attempt 0's MASTER_PORT, free until START.
  auto claim = config_.claim_master_port(0);
  Status listening = claim ? Status(Ok{}) : Status(fail(claim.error()));
  if (claim) {
    master_claim_ = std::move(claim).value();
    sink_.emplace(loop_);
    listening = sink_->listen(master_claim_.port());
  }
  const bool network = listening && nodes_.size() > 1;
  if (!listening) spdlog::warn("pre-flight: no network checks: {}", listening.error());
  if (!listening) sink_.reset();
  preflight_->turns = preflight_turns(hosts, kRounds, network);
  if (config_.preflight_send_ms == 0) config_.preflight_send_ms = send_ms_for(nodes_.size());
  if (config_.verbose)
    spdlog::info("pre-flight: {} check turn(s) for {} node(s): GEMMs of {} ms{}, {} rounds, the best kept",
                 preflight_->turns.size(), nodes_.size(), config_.preflight_gemm_ms,
                 network ? ", sends of " + std::to_string(config_.preflight_send_ms) + " ms to node 0" : "", kRounds);
  next_turn();
}

// Sends the next turn's orders; past the last turn, the verdict.
void Coordinator::next_turn() {
  auto& pf = *preflight_;
  for (; pf.turn < pf.turns.size(); ++pf.turn) {
    const PreflightTurn& turn = pf.turns[pf.turn];
    pf.waiting.clear();
    for (const auto node : turn.nodes)
      if (!nodes_[node].lost) pf.waiting.push_back(node);
    if (pf.waiting.empty()) continue;
    pf.turn_deadline = Clock::now() + kTurnTimeout;
    if (turn.measure == Measure::Compute) {
      for (const auto node : pf.waiting) gate_.send(nodes_[node].peer, rdzv::CheckCompute{config_.preflight_gemm_ms}.to_message());
      return;
    }
    rdzv::CheckNetwork order{config_.master_addr, master_claim_.port(), rdzv::random_hex(16), config_.preflight_send_ms};
    sink_->expect(order.token);
    gate_.send(nodes_[pf.waiting.front()].peer, order.to_message());
    return;
  }
  finish_preflight();
}

void Coordinator::on_checked(std::uint32_t node, const rdzv::Checked& checked) {
  if (phase_ != Phase::Preflight) return;
  auto& waiting = preflight_->waiting;
  if (std::find(waiting.begin(), waiting.end(), node) == waiting.end()) return;  // not its turn: stale
  const auto measure = preflight_->turns[preflight_->turn].measure;
  if (checked.what != measure_name(measure)) return;
  if (measure == Measure::Network && checked.failed.empty()) return;  // its bytes are timed by the sink
  record_check(node, measure, CheckResult{checked.mflops ? std::optional<double>(double(*checked.mflops)) : std::nullopt,
                                          checked.failed});
}

// A node's figure for the current turn; the next turn once every node of this one has one.
void Coordinator::record_check(std::uint32_t node, Measure measure, CheckResult result) {
  auto& pf = *preflight_;
  auto& results = measure == Measure::Compute ? pf.compute : pf.network;
  results[node] = results.count(node) ? best_of(results[node], result) : result;
  std::erase(pf.waiting, node);
  if (pf.waiting.empty()) {
    ++pf.turn;
    next_turn();
  }
}

void Coordinator::tick_preflight(Clock::time_point now) {
  auto& pf = *preflight_;
  if (pf.turn >= pf.turns.size()) return;
  const auto measure = pf.turns[pf.turn].measure;
  if (measure == Measure::Network)
    if (const auto rate = sink_->take_rate(); rate && !pf.waiting.empty())
      return record_check(pf.waiting.front(), measure, CheckResult{*rate, ""});
  if (std::erase_if(pf.waiting, [this](std::uint32_t node) { return nodes_[node].lost; }) && pf.waiting.empty()) {
    ++pf.turn;  // its nodes were lost meanwhile
    return next_turn();
  }
  if (now < pf.turn_deadline) return;
  for (const auto node : std::vector<std::uint32_t>(pf.waiting))
    record_check(node, measure, CheckResult{std::nullopt, "it did not finish within 30 s"});
}

// Every turn done: the figures judged, printed, and acted on.
void Coordinator::finish_preflight() {
  sink_.reset();  // MASTER_PORT's listener closed: START claims the port again for the workers
  auto& pf = *preflight_;
  std::vector<PreflightVerdict> named;
  for (const auto measure : {Measure::Compute, Measure::Network}) {
    auto& results = measure == Measure::Compute ? pf.compute : pf.network;
    // A node whose CPUs are slow sends slowly too (seen: 15% of a CPU sent at
    // a seventh of the others' rate): its link is not judged, nor judged by.
    for (const auto& v : named) results.erase(v.node);
    if (results.empty()) continue;
    if (config_.verbose) spdlog::info("{}", preflight_table(measure, results));
    const auto verdicts = judge_preflight(measure, results);
    if (verdicts.empty() && std::none_of(results.begin(), results.end(), [](const auto& r) { return r.second.rate; }))
      spdlog::warn("pre-flight: the {} check ran on no node ({}); no node is judged by it", measure_name(measure),
                   results.begin()->second.failed);
    named.insert(named.end(), verdicts.begin(), verdicts.end());
  }
  if (config_.verbose)
    spdlog::info("pre-flight: done in {:.1f} s, {} node(s) named",
                 std::chrono::duration<double>(Clock::now() - pf.began).count(), named.size());
  act_on_preflight(named);
  if (phase_ != Phase::Preflight) return;  // the job ended (node 0 named, or no spare left)
  phase_ = Phase::Running;
  start_attempt();
}

// check: say it, and blame the node (blamed again, it is kept out); swap:
// take it out now, so that a spare takes its group before any worker starts.
void Coordinator::act_on_preflight(const std::vector<PreflightVerdict>& named) {
  std::set<std::uint32_t> done;
  for (const auto& v : named) {
    const auto text = preflight_text(v, node_name(v.node));
    spdlog::warn("{}", text);
    spdlog::warn("event: {}", preflight_json(v, nodes_[v.node].host));
    if (!done.insert(v.node).second) continue;
    const std::string how = v.result.rate ? "slow in the pre-flight" : "failed the pre-flight";
    if (config_.preflight == PreflightAction::Swap)
      node_lost(v.node, how + " (--ddp-preflight=swap): " + preflight_figures(v), true);
    else
      blame(v.node, how + " (" + measure_name(v.measure) + ")");
    if (phase_ != Phase::Preflight) return;
  }
}

}  // namespace ddp::agent
