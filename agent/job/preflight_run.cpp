#include "job/preflight_run.hpp"

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kTurnTimeout{30};

std::uint32_t send_ms_for(const std::vector<PreflightTurn>& turns) {
  const auto network = std::count_if(turns.begin(), turns.end(), [](const auto& t) { return t.measure == Measure::Network; });
  return std::uint32_t(std::clamp<std::ptrdiff_t>(10000 / std::max<std::ptrdiff_t>(network, 1), 50, 250));
}
}  // namespace

PreflightRun::PreflightRun(const job::Job& job, Settings settings, Send send)
    : job_(job), settings_(settings), send_(std::move(send)) {}

std::optional<std::vector<PreflightVerdict>> PreflightRun::begin(Clock::time_point now) {
  began_ = now;
  turns_ = preflight_turns(job_.hosts(), kRounds, true);
  if (settings_.send_ms == 0) settings_.send_ms = send_ms_for(turns_);
  if (settings_.verbose)
    spdlog::info("pre-flight: {} check turn(s) for {} node(s): GEMMs of {} ms, transfers of {} ms between nodes, "
                 "{} rounds, the best kept",
                 turns_.size(), job_.size(), settings_.gemm_ms, settings_.send_ms, kRounds);
  next_turn(now);
  return std::exchange(verdicts_, std::nullopt);
}

// Sends the next turn's orders; past the last turn, the verdicts.
void PreflightRun::next_turn(Clock::time_point now) {
  for (; turn_ < turns_.size(); ++turn_) {
    waiting_.clear();
    transfers_.clear();
    turn_deadline_ = now + kTurnTimeout;
    send_turn(turns_[turn_]);
    if (!waiting_.empty() || !transfers_.empty()) return;
  }
  // Every turn done: a node slow in both GEMMs is checked once more first.
  if (!confirmed_) {
    confirmed_ = true;
    const auto again = confirmation_turns(job_.hosts(), judge_preflight(Measure::Compute, compute_));
    if (!again.empty()) {
      if (settings_.verbose) spdlog::info("pre-flight: {} turn(s) of GEMMs again, for the nodes slow in both", again.size());
      turns_.insert(turns_.end(), again.begin(), again.end());
      return next_turn(now);
    }
  }
  judged_ = true;
  verdicts_ = judge();
  if (settings_.verbose)
    spdlog::info("pre-flight: done in {:.1f} s, {} node(s) named",
                 std::chrono::duration<double>(now - began_).count(), verdicts_->size());
}

// A turn's orders to the nodes still in the step: CHECKCPU to each of its
// nodes, or CHECKNET to each transfer's sender, naming its receiver's sink.
void PreflightRun::send_turn(const PreflightTurn& turn) {
  for (const auto node : turn.nodes)
    if (!job_.node(node).lost) {
      waiting_.push_back(node);
      send_(node, rdzv::CheckCompute{settings_.gemm_ms}.to_message());
    }
  for (const auto& t : turn.transfers) {
    if (job_.node(t.from).lost || job_.node(t.to).lost) continue;
    const rdzv::Join& to = *job_.node(t.to).join;
    if (to.check_port == 0) {  // said as a warning on its node
      timed_.push_back({t, CheckResult{std::nullopt, "node " + std::to_string(t.to) + " opened no check port"}});
      continue;
    }
    rdzv::CheckNetwork order{to.addr, to.check_port, rdzv::random_hex(16), settings_.send_ms};
    transfers_[order.token] = t;
    send_(t.from, order.to_message());
  }
}

std::optional<std::vector<PreflightVerdict>> PreflightRun::on_checked(std::uint32_t node, const rdzv::Checked& checked,
                                                                     Clock::time_point now) {
  if (judged_) return std::nullopt;
  const auto measure = turns_[turn_].measure;
  if (checked.what != measure_name(measure)) return std::nullopt;
  if (measure == Measure::Compute) {
    if (std::find(waiting_.begin(), waiting_.end(), node) == waiting_.end()) return std::nullopt;  // not its turn
    record_check(node, CheckResult{checked.mflops ? std::optional<double>(double(*checked.mflops)) : std::nullopt,
                                   checked.failed});
  } else {
    const auto it = transfers_.find(checked.token);
    if (it == transfers_.end()) return std::nullopt;  // an earlier turn's, or a token this node made up
    const Transfer t = it->second;
    if (!checked.failed.empty() && (node == t.from || node == t.to))
      record_transfer(checked.token, CheckResult{std::nullopt, checked.failed});
    else if (node == t.to)  // the receiver's rate; none when the bytes came too fast to time (in one read)
      record_transfer(checked.token,
                      checked.kbps ? std::optional(CheckResult{double(*checked.kbps) / 1000, ""}) : std::nullopt);
    else
      return std::nullopt;  // its sender is done: the receiver times it
  }
  end_turn_if_done(now);
  return std::exchange(verdicts_, std::nullopt);
}

void PreflightRun::record_check(std::uint32_t node, CheckResult result) {
  compute_[node] = compute_.count(node) ? best_of(compute_[node], result) : result;
  std::erase(waiting_, node);
}

// A transfer of the current turn timed (or failed, or too short to time).
void PreflightRun::record_transfer(const std::string& token, std::optional<CheckResult> result) {
  const auto it = transfers_.find(token);
  if (it == transfers_.end()) return;
  const Transfer t = it->second;
  transfers_.erase(it);
  if (result) timed_.push_back({t, std::move(*result)});
}

void PreflightRun::end_turn_if_done(Clock::time_point now) {
  if (!waiting_.empty() || !transfers_.empty()) return;
  ++turn_;
  next_turn(now);
}

std::optional<std::vector<PreflightVerdict>> PreflightRun::tick(Clock::time_point now) {
  if (judged_) return std::nullopt;
  const auto gone = [this](std::uint32_t node) { return job_.node(node).lost; };
  const bool dropped = std::erase_if(waiting_, gone) +
                       std::erase_if(transfers_, [&](const auto& t) { return gone(t.second.from) || gone(t.second.to); });
  if (dropped && waiting_.empty() && transfers_.empty()) {  // its nodes were lost meanwhile
    end_turn_if_done(now);
    return std::exchange(verdicts_, std::nullopt);
  }
  if (now < turn_deadline_) return std::nullopt;
  const CheckResult late{std::nullopt, "it did not finish within 30 s"};
  const auto nodes = waiting_;
  std::vector<std::string> tokens, late_ones;
  for (const auto& [token, t] : transfers_) {
    tokens.push_back(token);
    late_ones.push_back(std::to_string(t.from) + " to " + std::to_string(t.to));
  }
  for (const auto node : nodes) late_ones.push_back("node " + std::to_string(node) + "'s GEMM");
  late_ones.resize(std::min<std::size_t>(late_ones.size(), 8));
  spdlog::warn("pre-flight: {} check(s) did not finish within 30 s: {}", nodes.size() + tokens.size(),
               fmt::join(late_ones, ", "));
  for (const auto node : nodes) record_check(node, late);
  for (const auto& token : tokens) record_transfer(token, late);
  end_turn_if_done(now);
  return std::exchange(verdicts_, std::nullopt);
}

// The figures judged, each measure in turn, and the nodes named said (a
// warning and a JSON "event:" line each).
std::vector<PreflightVerdict> PreflightRun::judge() {
  std::map<std::uint32_t, CheckResult> network;
  std::vector<PreflightVerdict> named;
  for (const auto measure : {Measure::Compute, Measure::Network}) {
    if (measure == Measure::Network) {
      network = link_results(timed_);
      for (const auto& v : named) network.erase(v.node);  // its CPUs are slow: its link is not judged
    }
    auto& results = measure == Measure::Compute ? compute_ : network;
    if (results.empty()) continue;
    if (settings_.verbose) spdlog::info("{}", preflight_table(measure, results));
    const auto verdicts = judge_preflight(measure, results);
    if (verdicts.empty() && std::none_of(results.begin(), results.end(), [](const auto& r) { return r.second.rate; }))
      spdlog::warn("pre-flight: the {} check ran on no node ({}); no node is judged by it", measure_name(measure),
                   results.begin()->second.failed);
    named.insert(named.end(), verdicts.begin(), verdicts.end());
  }
  for (const auto& v : named) {
    spdlog::warn("{}", preflight_text(v, job_.node_name(v.node)));
    spdlog::warn("event: {}", preflight_json(v, job_.node(v.node).join->host));
  }
  return named;
}

}  // namespace ddp::agent
