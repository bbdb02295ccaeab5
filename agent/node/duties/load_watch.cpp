#include "node/duties/load_watch.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ddp/node/cgroup.hpp"

namespace ddp::agent {

namespace {

std::uint32_t permille(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0 : std::uint32_t(std::min<std::uint64_t>(1000, part * 1000 / whole));
}

std::uint64_t delta(std::uint64_t before, std::uint64_t after) { return after > before ? after - before : 0; }

}  // namespace

std::optional<SchedTimes> parse_schedstat(std::string_view text) {
  std::istringstream in{std::string(text)};
  SchedTimes t;
  if (!(in >> t.on_cpu_ns >> t.waiting_ns)) return std::nullopt;
  return t;
}

rdzv::Load load_between(const LoadSample& before, const LoadSample& after, std::uint32_t attempt) {
  using std::chrono::duration_cast;
  const auto wall_ns = std::uint64_t(duration_cast<std::chrono::nanoseconds>(after.at - before.at).count());
  rdzv::Load load;
  load.attempt = attempt;
  load.window_ms = std::uint32_t(std::max<std::uint64_t>(1, wall_ns / 1000000));
  for (std::size_t i = 0; i < after.workers.size(); ++i) {
    const auto& a = after.workers[i];
    const auto& b = i < before.workers.size() ? before.workers[i] : std::nullopt;
    load.on_cpu.push_back(a && b ? permille(delta(b->on_cpu_ns, a->on_cpu_ns), wall_ns) : 0);
    load.waiting.push_back(a && b ? permille(delta(b->waiting_ns, a->waiting_ns), wall_ns) : 0);
  }
  if (before.throttled_ns && after.throttled_ns)
    load.throttled = permille(delta(*before.throttled_ns, *after.throttled_ns), wall_ns);
  const auto has = [](const auto& s) { return s.has_value(); };
  const bool nccl = !after.nccl.empty() && before.nccl.size() == after.nccl.size() &&
                    std::all_of(after.nccl.begin(), after.nccl.end(), has) &&
                    std::all_of(before.nccl.begin(), before.nccl.end(), has);
  for (std::size_t i = 0; nccl && i < after.nccl.size(); ++i)
    load.nccl.push_back(permille(delta(before.nccl[i]->gpu_ns, after.nccl[i]->gpu_ns), wall_ns));
  return load;
}

LoadSample LoadWatch::sample(const std::vector<pid_t>& pids, const std::vector<std::string>& nccl_files) {
  LoadSample s;
  s.at = std::chrono::steady_clock::now();
  for (const pid_t pid : pids) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
    std::ostringstream text;
    text << in.rdbuf();
    s.workers.push_back(pid > 0 && in ? parse_schedstat(text.str()) : std::nullopt);  // one that ended: idle
  }
  for (const pid_t pid : pids)
    if (pid > 0 && !s.throttled_ns) s.throttled_ns = cpu_throttled_ns(pid);
  for (const auto& file : nccl_files) s.nccl.push_back(file.empty() ? std::nullopt : read_nccl_stats(file));
  return s;
}

std::optional<rdzv::Load> LoadWatch::tick(std::uint32_t attempt, const std::vector<pid_t>& pids,
                                          const std::vector<std::string>& nccl_files) {
  const auto now = std::chrono::steady_clock::now();
  if (last_ && now - last_->at < kWindow) return std::nullopt;
  LoadSample next = sample(pids, nccl_files);
  std::optional<rdzv::Load> load;
  if (last_) load = load_between(*last_, next, attempt);
  last_ = std::move(next);
  return load;
}

}  // namespace ddp::agent
