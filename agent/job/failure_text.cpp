#include "job/failure_text.hpp"

#include <sstream>

#include "ddp/base/parse.hpp"
#include "job/job.hpp"

namespace ddp::agent {

namespace {

bool is_worker_failure(FailureKind kind) {
  return kind == FailureKind::WorkerExited || kind == FailureKind::StartFailed || kind == FailureKind::Hung;
}

const char* where_text(StalledIn where) {
  switch (where) {
    case StalledIn::elsewhere: return "its stack is outside any collective, where the others wait";
    case StalledIn::unknown: return "no Python stack to tell where";
    case StalledIn::collective: return "it waits in a collective too";
  }
  return "";
}

// "hung: no progress for 10 s (--ddp-hang-timeout; why); stalled on node 1: ...".
std::string hang_text(const HangFacts& hang, std::uint32_t node) {
  const auto timeout = seconds_text(std::chrono::milliseconds(hang.timeout_ms));
  std::string why = where_text(hang.where);
  if (hang.where != StalledIn::elsewhere)
    why += hang.step ? "; at step " + std::to_string(*hang.step) + " in its DDP_PROGRESS_FILE, the furthest behind"
                     : "; the rank silent longest";
  const std::string silence = hang.never ? "hung: no progress signal since it started, more than " + timeout +
                                               " ago, while other ranks made progress (--ddp-hang-timeout; " + why + ")"
                                         : "hung: no progress for " + timeout + " (--ddp-hang-timeout; " + why + ")";
  return silence + "; stalled on node " + std::to_string(node) + ": ranks " + rank_list(hang.stalled) +
         ", still progressing: " + rank_list(hang.progressing) +
         "; SIGABRT sent for the stalled ranks' stacks (PYTHONFAULTHANDLER)" +
         (hang.survived_abort ? "; it survived SIGABRT" : "");
}

}  // namespace

std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (const auto r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out.empty() ? "none" : out;
}

std::string what_happened(const Failure& f) {
  switch (f.kind) {
    case FailureKind::StartFailed: return "could not be started: " + f.detail;
    case FailureKind::Hung: return f.hang ? hang_text(*f.hang, f.node) : "hung";
    default:
      return f.signal ? "was killed by " + signal_name(f.signal) : "exited with code " + std::to_string(f.exit_code);
  }
}

namespace {

std::string worker_line(const Failure& f, std::uint32_t attempts) {
  const auto number = [](const std::optional<std::uint32_t>& n) { return n ? std::to_string(*n) : "?"; };
  std::string line = "worker rank " + number(f.rank) + " (local rank " + number(f.local_rank) + ") on node " +
                     std::to_string(f.node) + " (" + f.host + ") " + what_happened(f) + " at " + f.time;
  if (f.attempt > 0) line += " in attempt " + std::to_string(f.attempt) + " of " + std::to_string(attempts);
  return line;
}

// A lost or unhealthy node: "node 2 (n2, 10.0.0.2) was lost: why (attempt 1); what it changed".
std::string node_line(const Failure& f, const std::string& what) {
  std::string line = (f.at_rendezvous ? "rendezvous failed: node " : "node ") + node_name(f.node, f.host, f.addr) +
                     what + f.detail;
  // Node 0's loss ends every attempt alike; another node's says which one it hit.
  if (!f.at_rendezvous && f.node != 0) line += " (attempt " + std::to_string(f.attempt) + ")";
  if (!f.consequence.empty()) line += "; " + f.consequence;
  return line;
}

// The stderr tail and the error file, under the first line.
std::string worker_details(const Failure& f) {
  std::string out;
  if (!f.stderr_tail.empty()) {
    out += "; last lines of its stderr:";
    std::istringstream lines(f.stderr_tail);
    for (std::string line; std::getline(lines, line);) out += "\n  | " + line;
  }
  if (!f.error_file.empty()) out += "\n  details: " + f.error_file;
  return out;
}

const char* related_label(FailureKind kind) {
  switch (kind) {
    case FailureKind::NodeUnhealthy: return "\n  (its own failure before: ";
    case FailureKind::AgentSignalled: return "\n  (before Slurm's stop was heard of: ";
    default: return "\n  (before the loss was noticed: ";
  }
}

std::string stalled_elsewhere(const std::vector<StalledNode>& nodes) {
  std::string out = "\n  stalled as well (they waited for it):";
  for (const auto& n : nodes) out += " node " + std::to_string(n.node) + ": ranks " + rank_list(n.ranks) + ";";
  out.pop_back();
  return out;
}

}  // namespace

std::string node_name(std::uint32_t node, const std::string& host, const std::string& addr) {
  return std::to_string(node) + (host.empty() ? "" : " (" + host + (addr.empty() ? "" : ", " + addr) + ")");
}

std::string first_line(const Failure& f, std::uint32_t attempts) {
  switch (f.kind) {
    case FailureKind::WorkerExited:
    case FailureKind::StartFailed:
    case FailureKind::Hung:
      return worker_line(f, attempts);
    case FailureKind::HangUnreported:
      return "node " + node_name(f.node, f.host, f.addr) + " noticed a hang (--ddp-hang-timeout) but " + f.detail +
             " (its agent died or was cut off?)";
    case FailureKind::NodeLost:
      return node_line(f, " was lost: ");
    case FailureKind::NodeUnhealthy:
      return node_line(f, " is unhealthy, taken out of the step: ");
    case FailureKind::AgentSignalled:
      return node_line(f, ": its agent received " + signal_name(f.signal) +
                              ": Slurm is stopping the job or the step (scancel, preemption, a time limit, "
                              "srun interrupted)");
    case FailureKind::Setup:
      return f.detail;
  }
  return f.detail;
}

std::string describe(const RootCause& cause) {
  const Failure& f = cause.failure;
  std::string text = first_line(f, cause.attempts);
  if (is_worker_failure(f.kind)) text += worker_details(f);
  if (!cause.also_stalled.empty()) text += stalled_elsewhere(cause.also_stalled);
  if (cause.related) text += related_label(f.kind) + first_line(*cause.related, cause.attempts) + ")";
  if (cause.restarts_exhausted)
    text += "; no restart left to go on (--ddp-restarts=" + std::to_string(*cause.restarts_exhausted) + ")";
  for (const auto& node : cause.left) text += "; node " + node + " had finished and left, so the run cannot restart";
  if (f.kind != FailureKind::Setup) text += "\n  " + class_line(class_of(f));
  return text;
}

}  // namespace ddp::agent
