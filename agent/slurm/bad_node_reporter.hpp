// Node 0: each node the step takes out for cause (blamed twice, unhealthy,
// swapped after the pre-flight), one line to the plugin's FIFO
// (DDP_PLAN_BAD_NODE_REPORT) as it is taken out. The plugin reads it as root
// when the step ends: the nodes go into the job's ExcNodeList if it was
// requeued (spank/requeue_exclusion.hpp), and to the site's BadNodeHook if
// it has one (spank/bad_node_hook.hpp). Each line is bad_node_line's, whose
// reason is in the form root reads (plain_reason: printable ASCII, 300
// characters at most). No FIFO in the plan (standalone, the task shape):
// nothing to do.
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
  void tick(const std::vector<BadNode>& bad);

 private:
  std::string fifo_;
  std::size_t sent_ = 0;
};

}  // namespace ddp::agent
