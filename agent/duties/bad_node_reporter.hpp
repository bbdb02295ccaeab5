// Node 0: each node the step takes out for cause (blamed twice, unhealthy,
// swapped after the pre-flight), one line to the plugin's FIFO
// (DDP_PLAN_BAD_NODE_REPORT) as it is taken out, for the site's BadNodeHook,
// which the plugin runs as root when the step ends (spank/bad_node_hook.hpp).
// No FIFO in the plan (no hook, standalone): nothing to do.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ddp/wire/bad_node_report.hpp"

namespace ddp::agent {

class BadNodeReporter {
 public:
  explicit BadNodeReporter(std::string fifo = "") : fifo_(std::move(fifo)) {}
  // From the loop: writes the nodes taken out since the last call.
  void tick(const std::vector<BadNode>& taken_out);

 private:
  std::string fifo_;
  std::size_t sent_ = 0;
};

}  // namespace ddp::agent
