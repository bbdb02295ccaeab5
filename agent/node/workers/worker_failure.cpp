#include "node/workers/worker_failure.hpp"

#include <csignal>
#include <ctime>

namespace ddp::agent {

namespace {
// A report travels in one protocol line (16 KiB at most, percent-encoded).
constexpr std::size_t kMaxExcerpt = 4096;
}  // namespace

std::string local_time(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", &tm);
  return buf;
}

std::string stderr_excerpt(const std::vector<std::string>& lines, std::size_t from) {
  std::string text;
  for (std::size_t i = from; i < lines.size(); ++i) text += lines[i] + "\n";
  if (text.size() <= kMaxExcerpt) return text;
  return text.substr(0, kMaxExcerpt) + "...";
}

std::string stderr_excerpt(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  if (text.size() <= kMaxExcerpt) return text;
  return "..." + text.substr(text.size() - kMaxExcerpt);
}

namespace {

// A failure of worker `local` of this node, seen at `when`: who and when.
Failure worker_failure(FailureKind kind, const FailureSite& site, std::uint32_t local,
                       std::chrono::system_clock::time_point when) {
  Failure f;
  f.kind = kind;
  f.attempt = site.attempt;
  f.node = site.node;
  f.host = site.host;
  f.rank = site.rank_base + local;
  f.local_rank = local;
  f.time = local_time(when);
  return f;
}

}  // namespace

Failure exit_failure(const FailureSite& site, const WorkerExit& exit, std::string tail, std::string error_file,
                     bool oom_killed) {
  Failure f = worker_failure(FailureKind::WorkerExited, site, exit.local_rank, exit.when);
  f.exit_code = exit.status_code();
  f.signal = exit.signaled ? exit.signal : 0;
  f.stderr_tail = std::move(tail);
  f.error_file = std::move(error_file);
  f.cls = classify_worker(f, oom_killed);
  return f;
}

Failure start_failure(const FailureSite& site, const StartError& error, std::uint32_t local_rank) {
  Failure f = worker_failure(FailureKind::StartFailed, site, local_rank, std::chrono::system_clock::now());
  f.exit_code = error.exit_code;
  f.detail = error.why;
  if (error.transient) f.cls = FailureClass::Exit;
  return f;
}

Failure hang_failure(const FailureSite& site, const Hang& hang, std::size_t culprit, StalledIn where,
                     std::chrono::milliseconds timeout, const std::optional<WorkerExit>& exit,
                     const std::vector<std::string>& stderr_lines, std::string error_file) {
  const std::uint32_t local = hang.stalled[culprit].local;
  Failure f = worker_failure(FailureKind::Hung, site, local, exit ? exit->when : std::chrono::system_clock::now());
  f.exit_code = exit ? exit->status_code() : 128 + SIGABRT;
  f.hang = hang_facts(hang, culprit, where, site.rank_base, timeout, !exit);
  // Its stack dump from its start (the thread SIGABRT hit comes first), else the last lines.
  const auto dump = dump_start(stderr_lines);
  f.stderr_tail = dump < stderr_lines.size() ? stderr_excerpt(stderr_lines, dump) : stderr_excerpt(stderr_lines);
  f.error_file = std::move(error_file);
  return f;
}

}  // namespace ddp::agent
