#include "ddp/wire/failure.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace ddp {

namespace {

constexpr std::array<std::pair<FailureKind, const char*>, 8> kKindNames = {{
    {FailureKind::WorkerExited, "worker_exited"},
    {FailureKind::StartFailed, "start_failed"},
    {FailureKind::Hung, "hung"},
    {FailureKind::HangUnreported, "hang_unreported"},
    {FailureKind::NodeLost, "node_lost"},
    {FailureKind::NodeUnhealthy, "node_unhealthy"},
    {FailureKind::AgentSignalled, "agent_signalled"},
    {FailureKind::Setup, "setup"},
}};

}  // namespace

const char* kind_name(FailureKind kind) {
  for (const auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "?";
}

std::optional<FailureKind> kind_from_name(std::string_view name) {
  for (const auto& [k, n] : kKindNames)
    if (name == n) return k;
  return std::nullopt;
}

}  // namespace ddp
