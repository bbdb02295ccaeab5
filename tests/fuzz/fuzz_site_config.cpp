// The site config parser (ddp.conf, read as root by slurmstepd on every node)
// and the resolution of the settings for one node.
#include <string>

#include "ddp/site/site_config.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = ddp::fuzz::as_text(data, size);
  const auto config = ddp::parse_site_config(text, "fuzz.conf");
  if (!config) {
    FUZZ_CHECK(!config.error().empty());
    FUZZ_CHECK(config.error().find("fuzz.conf") != std::string::npos);  // every error names file:line
    return 0;
  }
  // Exact names stand in for Slurm's hostlists (fuzz_hostlist covers those).
  const auto matcher = [](const std::string& nodes, const std::string& node) { return nodes == node; };
  for (const auto& line : config->lines) {
    const auto node = line.nodes.empty() ? std::string("n1") : line.nodes;
    const auto partition = line.partitions.empty() ? std::string("gpu") : line.partitions.front();
    const auto settings = ddp::resolve_settings(*config, partition, node, matcher);
    FUZZ_CHECK(settings.port_range.first <= settings.port_range.last);
    for (const auto& env : settings.env) {
      FUZZ_CHECK(!env.name.empty());
      FUZZ_CHECK(!ddp::is_contract_variable(env.name));  // the worker contract is not the site's to set
    }
  }
  return 0;
}
