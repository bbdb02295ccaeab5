#include "node/duties/health_check.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "ddp/base/environment.hpp"
#include "ddp/base/parse.hpp"
#include "ddp/wire/node_plan.hpp"

namespace ddp::agent {

HealthCheck::HealthCheck(std::string command, std::chrono::milliseconds timeout, std::uint32_t node,
                         std::string host)
    : path_(std::move(command)), timeout_(timeout), node_(node), host_(std::move(host)) {}

void HealthCheck::start(std::uint32_t rank, const std::string& failure) {
  verdict_.reset();
  if (path_.empty() || command_.running()) return;
  Environment env = Environment::from_envp(environ);
  env.unset_prefix(kPlanPrefix);
  env.unset("SLURM_DDP_SECRET");
  env.set("DDP_HEALTH_FAILED_RANK", std::to_string(rank));
  env.set("DDP_HEALTH_FAILURE", failure);
  if (auto ok = command_.start({path_}, timeout_, "(HealthCheck= in the site config)", &env); !ok)
    verdict_ = "its HealthCheck " + path_ + " could not be started: " + ok.error();
}

bool HealthCheck::poll() {
  const auto outcome = command_.poll();
  if (!outcome) return false;
  verdict_ = outcome->ok ? "" : describe_failure(*outcome);
  if (!verdict_->empty()) spdlog::error("node {} ({}) is unhealthy: {}", node_, host_, *verdict_);
  return true;
}

std::string HealthCheck::describe_failure(const Command::Outcome& outcome) const {
  std::string said = outcome.said;
  if (const auto nl = said.rfind('\n'); nl != std::string::npos) said = said.substr(nl + 1);  // its last line
  return "its HealthCheck " + path_ + " " +
         (outcome.timed_out ? "did not finish within " + seconds_text(timeout_) : "failed") +
         (said.empty() ? "" : ": " + said);
}

std::string HealthCheck::take_verdict() {
  std::string verdict = verdict_.value_or("");
  verdict_.reset();
  return verdict;
}

}  // namespace ddp::agent
