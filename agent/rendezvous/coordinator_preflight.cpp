// The coordinator's pre-flight (--ddp-preflight, preflight.hpp): once every
// node has joined and before attempt 0's START, the turns of checks, each
// node's figures, the verdict, and what it leads to (a warning and a blame,
// or the node taken out for a spare before any worker starts).
#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "rendezvous/coordinator.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kTurnTimeout{30};

std::uint32_t send_ms_for(const std::vector<PreflightTurn>& turns) {
  const auto network = std::count_if(turns.begin(), turns.end(), [](const auto& t) { return t.measure == Measure::Network; });
  return std::uint32_t(std::clamp<std::ptrdiff_t>(10000 / std::max<std::ptrdiff_t>(network, 1), 50, 250));
}
}  // namespace

std::vector<std::string> Coordinator::hosts() const {
  std::vector<std::string> hosts;
  for (const auto& n : nodes_) hosts.push_back(n.host);
  return hosts;
}

void Coordinator::begin_preflight() {
  phase_ = Phase::Preflight;
  preflight_.emplace();
  preflight_->began = Clock::now();
  preflight_->turns = preflight_turns(hosts(), kRounds, true);
  if (config_.preflight_send_ms == 0) config_.preflight_send_ms = send_ms_for(preflight_->turns);
  if (config_.verbose)
    spdlog::info("pre-flight: {} check turn(s) for {} node(s): GEMMs of {} ms, transfers of {} ms between nodes, "
                 "{} rounds, the best kept",
                 preflight_->turns.size(), nodes_.size(), config_.preflight_gemm_ms, config_.preflight_send_ms,
                 kRounds);
  next_turn();
}

// Sends the next turn's orders; past the last turn, the verdict.
void Coordinator::next_turn() {
  auto& pf = *preflight_;
  for (; pf.turn < pf.turns.size(); ++pf.turn) {
    pf.waiting.clear();
    pf.transfers.clear();
    pf.turn_deadline = Clock::now() + kTurnTimeout;
    send_turn(pf.turns[pf.turn]);
    if (!pf.waiting.empty() || !pf.transfers.empty()) return;
  }
  finish_preflight();
}

// A turn's orders to the nodes still in the step: CHECKCPU to each of its
// nodes, or CHECKNET to each transfer's sender, naming its receiver's sink.
void Coordinator::send_turn(const PreflightTurn& turn) {
  auto& pf = *preflight_;
  for (const auto node : turn.nodes)
    if (!nodes_[node].lost) {
      pf.waiting.push_back(node);
      gate_.send(nodes_[node].peer, rdzv::CheckCompute{config_.preflight_gemm_ms}.to_message());
    }
  for (const auto& t : turn.transfers) {
    if (nodes_[t.from].lost || nodes_[t.to].lost) continue;
    const Node& to = nodes_[t.to];
    if (to.check_port == 0) {  // said as a warning on its node
      note_transfer(t, CheckResult{std::nullopt, "node " + std::to_string(t.to) + " opened no check port"});
      continue;
    }
    rdzv::CheckNetwork order{to.addr, to.check_port, rdzv::random_hex(16), config_.preflight_send_ms};
    pf.transfers[order.token] = t;
    gate_.send(nodes_[t.from].peer, order.to_message());
  }
}

void Coordinator::on_checked(std::uint32_t node, const rdzv::Checked& checked) {
  if (phase_ != Phase::Preflight || preflight_->turn >= preflight_->turns.size()) return;
  auto& pf = *preflight_;
  const auto measure = pf.turns[pf.turn].measure;
  if (checked.what != measure_name(measure)) return;
  if (measure == Measure::Compute) {
    if (std::find(pf.waiting.begin(), pf.waiting.end(), node) == pf.waiting.end()) return;  // not its turn: stale
    return record_check(node, CheckResult{checked.mflops ? std::optional<double>(double(*checked.mflops)) : std::nullopt,
                                          checked.failed});
  }
  const auto it = pf.transfers.find(checked.token);
  if (it == pf.transfers.end()) return;  // an earlier turn's, or a token this node made up
  const Transfer t = it->second;
  if (!checked.failed.empty() && (node == t.from || node == t.to))
    return record_transfer(checked.token, CheckResult{std::nullopt, checked.failed});
  if (node != t.to) return;  // its sender is done: the receiver times it
  // The receiver's rate; none when the bytes came too fast to time (in one
  // read): that says nothing against either end, so no figure.
  record_transfer(checked.token, checked.kbps ? std::optional(CheckResult{double(*checked.kbps) / 1000, ""}) : std::nullopt);
}

// A compute figure for the current turn.
void Coordinator::record_check(std::uint32_t node, CheckResult result) {
  auto& results = preflight_->compute;
  results[node] = results.count(node) ? best_of(results[node], result) : result;
  std::erase(preflight_->waiting, node);
  end_turn_if_done();
}

// A transfer of the current turn timed (or failed, or too short to time);
// the next turn once none is left.
void Coordinator::record_transfer(const std::string& token, std::optional<CheckResult> result) {
  auto& pf = *preflight_;
  const auto it = pf.transfers.find(token);
  if (it == pf.transfers.end()) return;
  const Transfer t = it->second;
  pf.transfers.erase(it);
  if (result) note_transfer(t, std::move(*result));
  end_turn_if_done();
}

void Coordinator::note_transfer(const Transfer& t, CheckResult result) {
  preflight_->timed.push_back({t, std::move(result)});
}

void Coordinator::end_turn_if_done() {
  auto& pf = *preflight_;
  if (!pf.waiting.empty() || !pf.transfers.empty()) return;
  ++pf.turn;
  next_turn();
}

void Coordinator::tick_preflight(Clock::time_point now) {
  auto& pf = *preflight_;
  if (pf.turn >= pf.turns.size()) return;
  const auto gone = [this](std::uint32_t node) { return nodes_[node].lost; };
  const bool dropped = std::erase_if(pf.waiting, gone) +
                       std::erase_if(pf.transfers, [&](const auto& t) { return gone(t.second.from) || gone(t.second.to); });
  if (dropped && pf.waiting.empty() && pf.transfers.empty()) return end_turn_if_done();  // its nodes were lost meanwhile
  if (now < pf.turn_deadline) return;
  // A turn is of one measure: the last of these records ends it, and nothing comes after.
  const CheckResult late{std::nullopt, "it did not finish within 30 s"};
  const auto nodes = pf.waiting;
  std::vector<std::string> tokens, late_ones;
  for (const auto& [token, t] : pf.transfers) {
    tokens.push_back(token);
    late_ones.push_back(std::to_string(t.from) + " to " + std::to_string(t.to));
  }
  for (const auto node : nodes) late_ones.push_back("node " + std::to_string(node) + "'s GEMM");
  late_ones.resize(std::min<std::size_t>(late_ones.size(), 8));
  spdlog::warn("pre-flight: {} check(s) did not finish within 30 s: {}", nodes.size() + tokens.size(),
               fmt::join(late_ones, ", "));
  for (const auto node : nodes) record_check(node, late);
  for (const auto& token : tokens) record_transfer(token, late);
}

// Every turn done: a node slow in both GEMMs checked once more, then the
// figures judged, printed, and acted on.
void Coordinator::finish_preflight() {
  auto& pf = *preflight_;
  if (!pf.confirmed) {
    pf.confirmed = true;
    const auto again = confirmation_turns(hosts(), judge_preflight(Measure::Compute, pf.compute));
    if (!again.empty()) {
      if (config_.verbose)
        spdlog::info("pre-flight: {} turn(s) of GEMMs again, for the nodes slow in both", again.size());
      pf.turns.insert(pf.turns.end(), again.begin(), again.end());
      return next_turn();
    }
  }
  std::map<std::uint32_t, CheckResult> network;
  std::vector<PreflightVerdict> named;
  for (const auto measure : {Measure::Compute, Measure::Network}) {
    if (measure == Measure::Network) {
      network = link_results(pf.timed);
      for (const auto& v : named) network.erase(v.node);  // its CPUs are slow: its link is not judged
    }
    auto& results = measure == Measure::Compute ? pf.compute : network;
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
