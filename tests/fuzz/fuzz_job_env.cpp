// The job's environment as slurmstepd reads it (ddp/plan/step_env.hpp and
// the DDP_* variables, request.hpp: apply_environment), then the plan made of
// it (plan_step). All of it is the job user's to set, read as root. A value is
// refused with a message, or the plan comes out whole: one task count per
// node, and a node plan the agent reads back as it was written.
//
// Input: the first byte picks the step's shape (nodes, tasks, the batch
// script); then lines of NAME=VALUE.
#include <map>
#include <string>

#include "ddp/plan/request.hpp"
#include "ddp/plan/step_env.hpp"
#include "ddp/plan/step_plan.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t shape = data[0];
  std::map<std::string, std::string, std::less<>> vars;
  ddp::fuzz::for_each_part(ddp::fuzz::as_text(data + 1, size - 1), '\n', [&](std::string_view line) {
    const auto eq = line.find('=');
    if (eq != std::string_view::npos) vars[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  });
  const ddp::EnvLookup env = [&](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };

  ddp::StepFacts facts;
  const bool batch = shape & 0x80;
  const std::uint32_t nodes = 1 + (shape & 0x3);
  for (std::uint32_t i = 0; i < nodes; ++i) facts.nodes.push_back("n" + std::to_string(i));
  facts.node_id = (shape >> 2) % nodes;
  facts.local_tasks = 1 + ((shape >> 4) & 0x3);
  facts.total_tasks = facts.local_tasks * nodes;
  facts.job_id = 42;
  facts.step_id = batch ? 0xfffffffb : 0;
  facts.shape = ddp::step_shape(batch, facts.total_tasks, facts.nodes.size());
  facts.argv = {"python", "train.py"};
  if (const auto read = ddp::read_step_env(facts, batch, env); !read) {
    FUZZ_CHECK(!read.error().empty());
    return 0;
  }
  if (!batch) FUZZ_CHECK(facts.tasks_per_node.size() == facts.nodes.size());
  for (const auto& gpu : facts.step_gpus) FUZZ_CHECK(gpu.find(',') == std::string::npos);

  ddp::DdpRequest request;
  if (const auto applied = ddp::apply_environment(request, env); !applied) {
    FUZZ_CHECK(!applied.error().empty());
    return 0;
  }
  if (!request.active()) return 0;
  if (facts.shape != ddp::Shape::Batch)  // as slurmstepd does before planning
    for (const auto& ok : {ddp::check_step_command(facts), ddp::check_options_for_shape(facts, request)})
      if (!ok) return 0;
  const auto plan = ddp::plan_step(facts, ddp::Settings{}, request, "10.0.0.1", ddp::NodeHardware{});
  if (!plan) {
    FUZZ_CHECK(!plan.error().empty());
    return 0;
  }
  if (plan->shape == ddp::Shape::Agent || plan->shape == ddp::Shape::Task) {
    ddp::Environment written;
    ddp::write_plan(plan->node, written);
    const auto back = ddp::read_plan(written);
    if (!back) std::fprintf(stderr, "the agent refuses the plan: %s\n", back.error().c_str());
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(*back == plan->node);
  }
  return 0;
}
