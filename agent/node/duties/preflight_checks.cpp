#include "node/duties/preflight_checks.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

#include "ddp/base/parse.hpp"
#include "ddp/wire/node_plan.hpp"
#include "ddp/wire/rdzv_auth.hpp"

namespace ddp::agent {

namespace {
constexpr std::chrono::seconds kCheckTimeout{30};
}

std::uint16_t PreflightChecks::open_sink() {
  if (auto ok = sink_.listen(0); !ok) {
    spdlog::warn("pre-flight: {}; the transfers to this node count as failed", ok.error());
    return 0;
  }
  return sink_.port();
}

std::optional<rdzv::Checked> PreflightChecks::start(const rdzv::Order& order) {
  if (command_.running() && !next_ &&
      (std::holds_alternative<rdzv::CheckCompute>(order) || std::holds_alternative<rdzv::CheckNetwork>(order))) {
    next_ = order;
    return std::nullopt;
  }
  std::vector<std::string> argv{self_};
  Environment env = Environment::from_envp(environ);
  env.unset_prefix(kPlanPrefix);
  env.unset("SLURM_DDP_SECRET");
  if (const auto* c = std::get_if<rdzv::CheckCompute>(&order)) {
    what_ = "compute", token_.clear();
    argv.insert(argv.end(), {"--preflight-gemm", std::to_string(c->ms)});
  } else if (const auto* n = std::get_if<rdzv::CheckNetwork>(&order)) {
    what_ = "network", token_ = n->token;
    // The head (the token and its proof) in the helper's environment, which
    // only this user reads: a command line is anybody's (/proc/PID/cmdline).
    env.set("SLURM_DDP_CHECK_HEAD", rdzv::transfer_head(secret_, run_, n->token));
    argv.insert(argv.end(), {"--preflight-send", n->addr, std::to_string(n->port), std::to_string(n->ms)});
  } else {
    return std::nullopt;
  }
  if (command_.running()) return rdzv::Checked{what_, std::nullopt, "an earlier check still runs", token_};
  if (auto ok = command_.start(argv, kCheckTimeout, "is the slurm-ddp package whole?", &env); !ok)
    return rdzv::Checked{what_, std::nullopt, ok.error(), token_};
  return std::nullopt;
}

std::vector<rdzv::Checked> PreflightChecks::poll() {
  sink_.tick();
  std::vector<rdzv::Checked> said;
  if (command_.running())
    if (const auto outcome = command_.poll()) {
      said.push_back(checked_from(what_, token_, *outcome));
      if (next_)
        if (const auto refused = start(*std::exchange(next_, std::nullopt))) said.push_back(*refused);
    }
  for (const auto& r : sink_.take_received())
    if (r.mb_per_s)
      said.push_back(rdzv::Checked{"network", std::nullopt, "", r.token, std::uint64_t(std::llround(*r.mb_per_s * 1000))});
    else  // too fast to time (all of it in one read): no figure, and node 0 need not wait
      said.push_back(rdzv::Checked{"network", std::nullopt, "", r.token});
  return said;
}

rdzv::Checked checked_from(const std::string& what, const std::string& token, const Command::Outcome& outcome) {
  rdzv::Checked checked{what, std::nullopt, "", token};
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
