#include "job/straggler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "ddp/base/json.hpp"
#include "ddp/base/parse.hpp"
#include "job/spread.hpp"

namespace ddp::agent {

namespace {

// A node's figure and the worker it is of: its busiest worker (on a CPU +
// waiting for one), or on GPUs its worker least in NCCL's collectives, as
// the share outside them.
std::pair<std::uint32_t, std::uint32_t> busiest(const rdzv::Load& load, bool gpu) {
  std::uint32_t best = 0, local = 0;
  for (std::size_t i = 0; i < load.on_cpu.size(); ++i) {
    const auto busy = gpu ? 1000 - std::min<std::uint32_t>(load.nccl[i], 1000) : load.on_cpu[i] + load.waiting[i];
    if (busy > best) best = busy, local = std::uint32_t(i);
  }
  return {std::min<std::uint32_t>(best, 1000), local};
}

bool gpu_figures(const std::vector<rdzv::Load>& loads) {
  return !loads.empty() && std::all_of(loads.begin(), loads.end(), [](const rdzv::Load& l) {
    return !l.nccl.empty() && l.nccl.size() == l.on_cpu.size();
  });
}

std::string percent(std::uint32_t permille) { return std::to_string((permille + 5) / 10) + "%"; }

}  // namespace

void StragglerRule::reset() {
  history_.clear();
  named_.clear();
}

std::vector<StragglerVerdict> StragglerRule::judge(const std::vector<NodeSeat>& seats,
                                                   const std::vector<rdzv::Load>& loads) {
  std::vector<StragglerVerdict> named;
  if (loads.size() != seats.size()) return named;
  std::vector<double> mean;
  bool full = true;  // not in the attempt's first 30 s, no node new to it
  const bool gpu = gpu_figures(loads);
  if (gpu != gpu_) history_.clear(), gpu_ = gpu;
  for (std::size_t i = 0; i < seats.size(); ++i) {
    auto& h = history_[seats[i].node];
    h.push_back(busiest(loads[i], gpu).first);
    if (h.size() > kWindows) h.pop_front();
    full = full && h.size() == kWindows;
    double sum = 0;
    for (const auto x : h) sum += x;
    mean.push_back(sum / double(h.size()));
  }
  if (!full) return named;
  if (seats.size() < 2) return named;
  for (std::size_t i = 0; i < seats.size(); ++i) {
    std::vector<double> others;
    for (std::size_t j = 0; j < seats.size(); ++j)
      if (j != i) others.push_back(mean[j]);
    const double m = median(others), sd = stddev(others);
    // Against one other node there is no spread to judge the noise by: twice its figure.
    const double ratio = others.size() < 2 ? kMinRatioOfOne : kMinRatio;
    const auto [now, local] = busiest(loads[i], gpu);
    const bool slow = mean[i] >= kMinBusy && mean[i] >= ratio * m && mean[i] > m + 3 * sd && now >= kMinBusyNow;
    if (!slow || !named_.insert(seats[i].node).second) continue;
    named.push_back({loads[i].attempt, seats[i], local, loads[i].on_cpu[local], loads[i].waiting[local],
                     loads[i].throttled, gpu ? std::optional(loads[i].nccl[local]) : std::nullopt,
                     std::uint32_t(std::lround(mean[i])), std::uint32_t(std::lround(m)), std::uint32_t(kWindows),
                     loads[i].window_ms});
  }
  return named;
}

std::string straggler_text(const StragglerVerdict& v) {
  return "straggler: node " + v.seat.name + " holds the others back " + straggler_figures(v);
}

// On GPUs: "(attempt 0): its rank 1's GPU was outside NCCL's collectives 96% of the last 30 s ..."
std::string gpu_figures_text(const StragglerVerdict& v, const std::string& seconds) {
  std::string text = "(attempt " + std::to_string(v.attempt) + "): its rank " +
                     std::to_string(v.seat.rank_base + v.local_rank) + "'s GPU was outside NCCL's collectives " +
                     percent(v.mean_busy) + " of the last " + seconds + " (in them " + percent(*v.in_collectives) +
                     " of the last window); the other nodes' ranks were outside them " + percent(v.others_median) +
                     " (median) and waited for it in every collective: the job runs at this node's pace";
  if (v.others_median > 0) {
    const auto tenths = int(10.0 * v.mean_busy / v.others_median);
    text += ", about " + std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "x slower than the others";
  }
  return text;
}

std::string straggler_figures(const StragglerVerdict& v) {
  const auto seconds = seconds_text(std::chrono::milliseconds(std::uint64_t(v.windows) * v.window_ms));
  if (v.in_collectives) return gpu_figures_text(v, seconds);
  std::string text = "(attempt " + std::to_string(v.attempt) + "): its rank " +
                     std::to_string(v.seat.rank_base + v.local_rank) + " was busy " + percent(v.mean_busy) +
                     " of the last " + seconds + " (in the last window: on a CPU " + percent(v.on_cpu) +
                     ", waiting for one " + percent(v.waiting) + ")";
  if (v.throttled && *v.throttled >= 100)
    text += "; its cpu cgroup was throttled " + percent(*v.throttled) + " of the time (a CPU quota)";
  text += "; the other nodes' busiest ranks were busy " + percent(v.others_median) +
          " (median) and waited for it at every collective: the job runs at this node's pace";
  if (v.others_median > 0) {
    const auto tenths = int(10.0 * v.mean_busy / v.others_median);
    text += ", about " + std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "x slower than the others";
  }
  return text;
}

std::string straggler_json(const StragglerVerdict& v) {
  JsonObject json{{"event", "straggler"},
                  {"attempt", v.attempt},
                  {"node", v.seat.node},
                  {"host", v.seat.host.substr(0, 256)},
                  {"rank", v.seat.rank_base + v.local_rank},
                  {"busy_permille", v.mean_busy},
                  {"on_cpu_permille", v.on_cpu},
                  {"waiting_permille", v.waiting}};
  if (v.throttled) json["throttled_permille"] = *v.throttled;
  if (v.in_collectives) json["in_collectives_permille"] = *v.in_collectives;
  json["others_median_permille"] = v.others_median;
  json["windows"] = v.windows;
  json["window_ms"] = v.window_ms;
  return json_line(json);
}

void StragglerWatch::begin_attempt(std::uint32_t attempt) {
  attempt_ = attempt;
  latest_.clear();
  rule_.reset();
}

void StragglerWatch::on_load(std::uint32_t node, const rdzv::Load& load) {
  if (load.attempt == attempt_) latest_[node] = load;
}

std::vector<StragglerVerdict> StragglerWatch::tick(const std::vector<NodeSeat>& seats) {
  // A window is judged once every seat has sent one since the last judgement.
  std::vector<rdzv::Load> loads;
  for (const auto& seat : seats) {
    const auto it = latest_.find(seat.node);
    if (it == latest_.end()) return {};
    loads.push_back(it->second);
  }
  latest_.clear();
  if (verbose_) {
    std::string line;
    const bool gpu = gpu_figures(loads);
    for (std::size_t i = 0; i < seats.size(); ++i) {
      const auto [busy, local] = busiest(loads[i], gpu);
      line += (line.empty() ? "" : ", ") + std::to_string(seats[i].node) + ": " + percent(busy) + " (rank " +
              std::to_string(seats[i].rank_base + local) + ")";
    }
    spdlog::info("busiest rank per node{}, last {} ms: {}", gpu ? " (GPU outside NCCL's collectives)" : "",
                 loads.front().window_ms, line);
  }
  auto named = rule_.judge(seats, loads);
  for (const auto& verdict : named) {
    spdlog::warn("{}", straggler_text(verdict));
    spdlog::warn("event: {}", straggler_json(verdict));
  }
  return named;
}

}  // namespace ddp::agent
