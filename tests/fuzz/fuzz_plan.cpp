// The plan the plugin hands each agent (ddp/wire/node_plan.hpp): DDP_PLAN_*
// variables in the agent's environment, which the job's user can also set
// (a standalone agent, or a task that execs the agent itself). read_plan
// either refuses with a message, or returns a plan that is consistent and
// travels unchanged: what write_plan writes for it reads back equal.
//
// Input: lines of NAME=VALUE, each NAME read as DDP_PLAN_NAME.
#include "ddp/wire/node_plan.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ddp::Environment env;
  ddp::fuzz::for_each_part(ddp::fuzz::as_text(data, size), '\n', [&](std::string_view line) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return;
    env.set(std::string(ddp::kPlanPrefix) + std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
  });
  const auto plan = ddp::read_plan(env);
  if (!plan) {
    FUZZ_CHECK(!plan.error().empty());
    return 0;
  }
  FUZZ_CHECK(plan->node_rank < plan->nnodes);
  FUZZ_CHECK(std::uint64_t(plan->rank_base) + plan->nproc <= plan->world_size);
  FUZZ_CHECK(plan->placements.empty() || plan->placements.size() == plan->nproc);
  ddp::Environment again;
  ddp::write_plan(*plan, again);
  const auto back = ddp::read_plan(again);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(*back == *plan);
  (void)ddp::scontrol_job_name(*plan);
  return 0;
}
