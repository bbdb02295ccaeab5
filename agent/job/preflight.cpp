#include "job/preflight.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "ddp/base/json.hpp"
#include "job/spread.hpp"

namespace ddp::agent {

namespace {

// At least this many times below the others' median: a GEMM 1.5x, a link 2x
// (healthy transfers between nodes that share a host's cores can be 1.6x
// apart; a link that lost a lane or runs at a lower speed is 2x to 100x off).
double slower_by(Measure m) { return m == Measure::Compute ? 1.5 : 2.0; }
constexpr double kSigmas = 3.0;  // and more than this many of their standard deviations
// ... or this many times below, whatever their spread: three others spread by
// a noisy machine (the sanitizer pass's slowed agents) can have an sd of a
// third of their median, which would hide a link at a twentieth of it.
constexpr double kFarOff = 10.0;
constexpr std::size_t kMinNodes = 3;

std::string fixed1(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", x);
  return text;
}

// The figure as fixed1() prints it, as a number: JSON shows it so (12.0).
double rounded1(double x) { return std::strtod(fixed1(x).c_str(), nullptr); }

// A measure's rate as people read it: GEMMs in GFLOP/s, transfers in MB/s.
std::string rate_text(Measure m, double rate) {
  return m == Measure::Compute ? fixed1(rate / 1000.0) + " GFLOP/s" : fixed1(rate) + " MB/s";
}

}  // namespace

const char* measure_name(Measure m) { return m == Measure::Compute ? "compute" : "network"; }

std::vector<std::uint32_t> ring_shifts(std::size_t nodes, std::uint32_t rounds) {
  std::vector<std::uint32_t> shifts;
  if (nodes < 2) return shifts;
  std::vector<std::uint32_t> candidates{std::uint32_t(nodes / 2)};
  for (std::uint32_t s = 1; s < nodes && candidates.size() < rounds + 1; ++s) candidates.push_back(s);
  for (const auto s : candidates)
    if (shifts.size() < rounds && std::find(shifts.begin(), shifts.end(), s) == shifts.end()) shifts.push_back(s);
  while (shifts.size() < rounds) shifts.push_back(shifts.back());
  return shifts;
}

namespace {

// One round of the ring, packed into turns: a host sends at most once and
// receives at most once in a turn (first fit: each transfer in the first
// turn where its sender's host sends nothing and its receiver's host
// receives nothing yet; one turn when every node has a machine of its own,
// one per node when they share one).
std::vector<PreflightTurn> ring_turns(const std::vector<std::uint32_t>& host_of, std::uint32_t shift) {
  const std::size_t n = host_of.size();
  std::vector<std::vector<bool>> sends(n), receives(n);  // by host id, by turn
  const auto busy = [](const std::vector<bool>& turns, std::size_t turn) { return turn < turns.size() && turns[turn]; };
  const auto take = [](std::vector<bool>& turns, std::size_t turn) {
    if (turns.size() <= turn) turns.resize(turn + 1);
    turns[turn] = true;
  };
  std::vector<PreflightTurn> turns;
  for (std::uint32_t from = 0; from < n; ++from) {
    const Transfer t{from, std::uint32_t((from + shift) % n)};
    const auto hs = host_of[t.from], hr = host_of[t.to];
    std::size_t turn = 0;
    while (busy(sends[hs], turn) || busy(receives[hr], turn)) ++turn;
    take(sends[hs], turn), take(receives[hr], turn);
    if (turn == turns.size()) turns.push_back({Measure::Network, {}, {}});
    turns[turn].transfers.push_back(t);
  }
  return turns;
}

}  // namespace

std::vector<PreflightTurn> preflight_turns(const std::vector<std::string>& hosts, std::uint32_t rounds, bool network) {
  std::vector<PreflightTurn> one_round;
  std::map<std::string, std::uint32_t> ids;  // a number for each host
  std::vector<std::uint32_t> host_of, seen;  // by node; nodes of each host so far: the turn a node's check goes in
  for (std::uint32_t node = 0; node < hosts.size(); ++node) {
    const auto id = ids.emplace(hosts[node], std::uint32_t(ids.size())).first->second;
    host_of.push_back(id);
    if (id == seen.size()) seen.push_back(0);
    const auto turn = seen[id]++;
    if (turn == one_round.size()) one_round.push_back({Measure::Compute, {}, {}});
    one_round[turn].nodes.push_back(node);
  }
  std::vector<PreflightTurn> turns;
  for (std::uint32_t round = 0; round < rounds; ++round) turns.insert(turns.end(), one_round.begin(), one_round.end());
  if (!network) return turns;
  for (const auto shift : ring_shifts(hosts.size(), rounds)) {
    const auto ring = ring_turns(host_of, shift);
    turns.insert(turns.end(), ring.begin(), ring.end());
  }
  return turns;
}

std::vector<PreflightTurn> confirmation_turns(const std::vector<std::string>& hosts,
                                              const std::vector<PreflightVerdict>& named) {
  std::vector<std::uint32_t> suspects;
  std::vector<std::string> their_hosts;
  for (const auto& v : named)
    if (v.measure == Measure::Compute && v.result.rate && v.node < hosts.size()) {
      suspects.push_back(v.node);
      their_hosts.push_back(hosts[v.node]);
    }
  auto turns = preflight_turns(their_hosts, 1, false);
  for (auto& turn : turns)
    for (auto& node : turn.nodes) node = suspects[node];
  return turns;
}

CheckResult best_of(const CheckResult& a, const CheckResult& b) {
  if (!a.rate) return b.rate || a.failed.empty() ? b : a;
  if (!b.rate) return a;
  return *a.rate >= *b.rate ? a : b;
}

std::map<std::uint32_t, CheckResult> link_results(const std::vector<TimedTransfer>& timed) {
  std::map<std::uint32_t, CheckResult> sent, received, links;
  const auto keep = [](std::map<std::uint32_t, CheckResult>& best, std::uint32_t node, CheckResult r, const char* side) {
    r.side = side;
    best[node] = best.count(node) ? best_of(best[node], r) : r;
  };
  for (const auto& [t, r] : timed) {
    keep(sent, t.from, r, "out");
    keep(received, t.to, r, "in");
  }
  for (const auto* side : {&sent, &received})
    for (const auto& [node, r] : *side) {
      const auto out = sent.count(node) ? std::optional(sent[node]) : std::nullopt;
      const auto in = received.count(node) ? std::optional(received[node]) : std::nullopt;
      links[node] = link_result(out, in);
    }
  return links;
}

CheckResult link_result(const std::optional<CheckResult>& out, const std::optional<CheckResult>& in) {
  if (!out || !in) return out ? *out : in ? *in : CheckResult{};
  if (!out->rate) return *out;
  if (!in->rate) return *in;
  return *out->rate <= *in->rate ? *out : *in;
}

std::vector<PreflightVerdict> judge_preflight(Measure measure, const std::map<std::uint32_t, CheckResult>& results) {
  std::vector<PreflightVerdict> named;
  std::size_t measured = 0;
  for (const auto& [node, r] : results) measured += r.rate.has_value();
  if (measured == 0) return named;  // the check is broken, not the nodes (the caller says so)
  for (const auto& [node, r] : results) {
    std::vector<double> others;
    for (const auto& [other, o] : results)
      if (other != node && o.rate) others.push_back(*o.rate);
    PreflightVerdict v{node, measure, r};
    if (!others.empty()) v.others_median = median(others), v.others_sd = stddev(others);
    if (!r.rate) {
      named.push_back(v);
      continue;
    }
    if (measured < kMinNodes || others.size() < kMinNodes - 1) continue;
    const bool apart = *r.rate < v.others_median - kSigmas * v.others_sd || *r.rate * kFarOff <= v.others_median;
    if (*r.rate * slower_by(measure) <= v.others_median && apart) named.push_back(v);
  }
  return named;
}

std::string preflight_figures(const PreflightVerdict& v) {
  const bool compute = v.measure == Measure::Compute;
  if (!v.result.rate) return std::string(compute ? "its compute check failed: " : "its network check failed: ") + v.result.failed;
  std::string text = compute ? "its GEMM ran at "
                     : v.result.side == "in" ? "its transfers in ran at best at "
                                             : "its transfers out ran at best at ";
  text += rate_text(v.measure, *v.result.rate) + ", the other nodes' median " +
          rate_text(v.measure, v.others_median) + " (sd " + rate_text(v.measure, v.others_sd) + ")";
  if (*v.result.rate > 0) text += ": " + fixed1(v.others_median / *v.result.rate) + "x slower";
  return text + " (named at " + fixed1(slower_by(v.measure)) + "x the median and 3 sd below it, or 10x)";
}

std::string preflight_text(const PreflightVerdict& v, const std::string& node_name) {
  const char* what = !v.result.rate ? "failed a check" : v.measure == Measure::Compute ? "computes slowly" : "has a slow link";
  return "pre-flight: node " + node_name + " " + what + ": " + preflight_figures(v);
}

std::string preflight_json(const PreflightVerdict& v, const std::string& host) {
  JsonObject json{{"event", "preflight"}, {"check", measure_name(v.measure)}, {"node", v.node}, {"host", host}};
  if (v.result.rate) {
    json["rate"] = rounded1(*v.result.rate);
    json["others_median"] = rounded1(v.others_median);
    json["others_sd"] = rounded1(v.others_sd);
    json["unit"] = v.measure == Measure::Compute ? "MFLOP/s" : "MB/s";
  } else {
    json["failed"] = v.result.failed;
  }
  if (!v.result.side.empty()) json["side"] = v.result.side;
  return json_line(json);
}

std::string preflight_table(Measure measure, const std::map<std::uint32_t, CheckResult>& results) {
  std::string line = std::string("pre-flight ") + measure_name(measure) + " by node:";
  for (const auto& [node, r] : results)
    line += " " + std::to_string(node) + "=" + (r.rate ? rate_text(measure, *r.rate) : "failed");
  return line;
}

}  // namespace ddp::agent
