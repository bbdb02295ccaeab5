#include "duties/preflight_checks.hpp"

#include <chrono>

#include "ddp/base/parse.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kCheckTimeout{30};
}

std::optional<rdzv::Checked> PreflightChecks::start(const rdzv::Order& order) {
  std::vector<std::string> argv{self_};
  if (const auto* c = std::get_if<rdzv::CheckCompute>(&order)) {
    what_ = "compute";
    argv.insert(argv.end(), {"--preflight-gemm", std::to_string(c->ms)});
  } else if (const auto* n = std::get_if<rdzv::CheckNetwork>(&order)) {
    what_ = "network";
    argv.insert(argv.end(), {"--preflight-send", n->addr, std::to_string(n->port), n->token,
                             std::to_string(n->ms)});
  } else {
    return std::nullopt;
  }
  if (command_.running()) return rdzv::Checked{what_, std::nullopt, "an earlier check still runs"};
  if (auto ok = command_.start(argv, kCheckTimeout, "is the slurm-ddp package whole?"); !ok)
    return rdzv::Checked{what_, std::nullopt, ok.error()};
  return std::nullopt;
}

std::optional<rdzv::Checked> PreflightChecks::poll() {
  if (!command_.running()) return std::nullopt;
  const auto outcome = command_.poll();
  if (!outcome) return std::nullopt;
  return checked_from(what_, *outcome);
}

rdzv::Checked checked_from(const std::string& what, const Command::Outcome& outcome) {
  rdzv::Checked checked{what, std::nullopt, ""};
  const auto said = outcome.said.substr(0, 400);
  if (outcome.timed_out) return checked.failed = "it did not finish within 30 s", checked;
  if (!outcome.ok) return checked.failed = said.empty() ? "it failed" : said, checked;
  if (what != "compute") return checked;
  const auto at = said.rfind("mflops=");
  const auto rate = at == std::string::npos ? Result<std::uint64_t>(fail("no figure"))
                                            : parse_uint(said.substr(at + 7), 0, 1ull << 40, "mflops");
  if (!rate) return checked.failed = "its helper said '" + printable(said, 80) + "'", checked;
  checked.mflops = *rate;
  return checked;
}

}  // namespace ddp::agent
