// The node agent's work on this node's workers: starting them, the flow of
// their output, their failures as values, and the duties beside them (the
// hang watch, the site's HealthCheck). The class: agent_impl.hpp.
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "agent_impl.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/node/cgroup.hpp"

namespace ddp::agent {

namespace {

std::string if_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? path : "";
}

// Our NCCL profiler plugin: beside this agent (a build tree, the GPU kit),
// else where the package installs it; "" when neither has it.
std::string nccl_profiler_plugin() {
  const auto beside = std::filesystem::path(self_binary()).parent_path() / "libnccl-profiler-ddp.so";
  if (auto found = if_exists(beside.string()); !found.empty()) return found;
  return if_exists(DDP_NCCL_PROFILER_PATH);
}

}  // namespace

// ---------------------------------------------------------------------------
// This node's workers

Status Agent::start_workers() {
  std::vector<std::string> warnings;
  const auto base = Environment::from_envp(environ);  // the job's, read once
  LaunchChoices choices{!spec_.standalone, spec_.one_gpu_per_worker, spec_.plan.hang_timeout_ms > 0,
                        requeue_.enabled(), ""};
  // Opt-in (DDP_NCCL_PROFILER=1 in the job's environment) until the plugin
  // has run under a real NCCL on a GPU (the kit's row slurm-6): it goes into
  // the user's own processes, and NCCL's kernel-channel events cost it work.
  const auto opted_in = base.get("DDP_NCCL_PROFILER") == "1";
  if (opted_in && spec_.plan.mode == Mode::Gpu && spec_.plan.stragglers != StragglerAction::Off) {
    choices.nccl_profiler = nccl_profiler_plugin();
    if (choices.nccl_profiler.empty())
      warnings.push_back("no libnccl-profiler-ddp.so beside ddp-agent or in " DDP_NCCL_PROFILER_PATH
                         ": GPU stragglers are judged by the workers' CPU time only (is the slurm-ddp package whole?)");
  }
  auto launches = worker_launches(spec_.plan, choices, attempt_, files_, base, warnings);
  nccl_files_.clear();
  for (std::uint32_t local = 0; !choices.nccl_profiler.empty() && local < launches.size(); ++local)
    nccl_files_.push_back(files_.nccl_stats_file(attempt_.number, attempt_.layout.rank_base + local));
  output_.reset();
  for (std::uint32_t local = 0; local < launches.size(); ++local) {
    auto ends = output_.add_worker(local, attempt_.layout.rank_base + local);
    if (!ends) return fail(ends.error());
    launches[local].stdout_fd = ends->out;
    launches[local].stderr_fd = ends->err;
  }
  for (const auto& warning : warnings) spdlog::warn("{}", warning);
  const WorkerLayout& layout = attempt_.layout;
  if (spec_.plan.verbose)
    spdlog::info("node {} ({}): attempt {}: starting {} worker(s), ranks {}..{} of {}, MASTER_ADDR={} MASTER_PORT={}{}",
                 spec_.plan.node_rank, host_, attempt_.number, layout.nproc, layout.rank_base,
                 layout.rank_base + layout.nproc - 1, layout.world_size, layout.master_addr, layout.master_port,
                 attempt_.ifname.empty() ? "" : ", interface " + attempt_.ifname);
  hang_.begin_attempt(WallClock::now());
  attempt_.oom_kills_at_start = oom_kills(getpid());
  load_.begin_attempt();
  exits_.assign(layout.nproc, std::nullopt);
  auto started = group_.start(spec_.command, launches, signals_.previous_mask(),
                              [this](std::uint32_t local) { output_.close_child_ends(local); });
  watch_output();
  return started;
}

void Agent::watch_output() {
  if (output_paused_) return;
  for (const int fd : output_.read_fds()) {
    loop_.remove(fd);  // already watched, or not
    auto added = loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) {
      if (!output_.on_readable(fd)) loop_.remove(fd);
      update_output_flow();
    });
    if (!added) spdlog::warn("worker output will be lost: {}", added.error());
  }
}

// Back-pressure (workers/sink.hpp): while a reader holds the output, the
// workers' pipes leave the loop (the workers block on their writes) and the
// hang watch waits; a sink that drained brings them back.
void Agent::update_output_flow() {
  const bool held = output_.held();
  hang_.hold(held);
  if (held == output_paused_) return;
  output_paused_ = held;
  if (!held) return watch_output();
  for (const int fd : output_.read_fds()) loop_.remove(fd);
}

FailureSite Agent::site() const {
  return {attempt_.number, spec_.plan.node_rank, host_, attempt_.layout.rank_base};
}

std::string Agent::error_file(std::uint32_t local) const {
  return if_exists(files_.error_file(attempt_.number, attempt_.layout.rank_base + local));
}

void Agent::report_exit(const WorkerExit& exit) {
  output_.drain();
  // The OOM killer strikes with SIGKILL; its cgroup counts it (cgroup.hpp).
  const auto oom_now = exit.signaled && exit.signal == SIGKILL ? oom_kills(getpid()) : std::nullopt;
  const bool oom_killed = oom_now && attempt_.oom_kills_at_start && *oom_now > *attempt_.oom_kills_at_start;
  report_failure(exit_failure(site(), exit, stderr_excerpt(output_.stderr_tail(exit.local_rank)),
                              error_file(exit.local_rank), oom_killed));
}

// The first failure on this node: report it, then stop our other workers at
// once rather than waiting for the coordinator's STOP.
void Agent::report_failure(const Failure& failure) {
  if (!failure.error_file.empty()) files_.keep();  // the root cause may point at it
  client_->report_failure(failure);
  health_.start(failure.rank.value_or(attempt_.layout.rank_base), what_happened(failure));
  step({.kind = Event::WorkerFailed, .value = failure.exit_code});
}

// ---------------------------------------------------------------------------
// The duties: the hang watch (--ddp-hang-timeout), the site's HealthCheck,
// the load watch (stragglers)

// Each worker's last progress; nullopt for one that has ended well (no longer
// watched), unless `ended_too`.
std::vector<std::optional<Progress>> Agent::progress(bool ended_too) const {
  std::vector<std::optional<Progress>> last(attempt_.layout.nproc);
  for (std::uint32_t local = 0; local < last.size(); ++local) {
    if (!ended_too && local < exits_.size() && exits_[local] && !exits_[local]->failed()) continue;
    const auto file = files_.progress_file(attempt_.number, attempt_.layout.rank_base + local);
    last[local] = read_progress(file).value_or(Progress{});
  }
  return last;
}

// Which of this attempt's workers have ended, by local rank.
std::vector<bool> Agent::ended() const {
  std::vector<bool> ended(exits_.size());
  for (std::size_t i = 0; i < exits_.size(); ++i) ended[i] = exits_[i].has_value();
  return ended;
}

// Every loop turn while the workers run.
void Agent::tick_hang_watch() {
  if (!hang_.on() || !watching_workers(life_)) return;
  if (hang_.hang()) {
    if (hang_.settled(ended())) report_hang();
    return;
  }
  if (!hang_.check_due()) return;
  if (auto hang = hang_.find(progress(false))) begin_hang(std::move(*hang));
}

// SIGABRT makes Python (PYTHONFAULTHANDLER) print every thread's stack; the
// report waits for the stalled workers to end so that their stacks are in it.
void Agent::begin_hang(Hang hang) {
  spdlog::warn("node {}: rank(s) {} made no progress for {}: SIGABRT for their stacks", spec_.plan.node_rank,
               rank_list(stalled_ranks(hang, attempt_.layout.rank_base)), seconds_text(hang_.timeout()));
  client_->report_hanging(attempt_.number);  // before any rank dies of it: their peers' failures are consequences
  for (const auto& r : hang.stalled) group_.abort_for_stack(r.local);
  hang_.found(std::move(hang));
}

// The culprit on this node (hang_watch.hpp); the coordinator compares it
// with the other nodes' by where it stalled, its step, then how long ago.
void Agent::report_hang() {
  const Hang& hang = *hang_.hang();
  output_.drain();
  std::vector<StalledIn> where;
  for (const auto& r : hang.stalled) where.push_back(where_stalled(output_.stderr_tail(r.local)));
  const std::size_t culprit = pick_culprit(hang, where);
  const std::uint32_t local = hang.stalled[culprit].local;
  report_failure(hang_failure(site(), hang, culprit, where[culprit], hang_.timeout(), exits_[local],
                              output_.stderr_tail(local), error_file(local)));
}

// Once the attempt's workers have ended: node 0 says (once) if none of them
// ever signalled progress, so the watch never started.
void Agent::tell_if_untouched() {
  if (spec_.plan.node_rank != 0 || exits_.empty()) return;
  if (const auto warning = hang_.untouched_warning_once(progress(true), spec_.plan.node_rank))
    spdlog::warn("{}", *warning);
}

// A window of the workers' CPU time, every 5 s while they run; none while
// their output is held (they may be blocked on it, not slow).
void Agent::tick_load_watch() {
  if (life_.state != AgentState::Running || spec_.plan.stragglers == StragglerAction::Off) return;
  if (output_paused_) return load_.hold();
  if (const auto load = load_.tick(attempt_.number, group_.pids(), nccl_files_)) client_->report_load(*load);
}

// --ddp-preflight: node 0's orders, before attempt 0 (no worker runs yet).
void Agent::on_check(const rdzv::Order& check) {
  if (life_.state != AgentState::Rendezvous) return;
  if (const auto refused = preflight_.start(check)) client_->report_checked(*refused);
}

void Agent::tick_preflight() {
  for (const auto& checked : preflight_.poll()) client_->report_checked(checked);
}

void Agent::tick_health_check() {
  // STOPPED, if it waited for the verdict.
  if (health_.poll()) step({.kind = Event::HealthVerdict, .health_running = health_.running()});
}

}  // namespace ddp::agent
