// Which nodes failed the job in ways that are the node's own fault
// (failure_class.hpp's blame_node: a CUDA or NCCL error; a node named a
// straggler), and which are to be kept out of the job's later attempts: a
// node blamed twice. One bad GPU or link fails a job again and again, and a
// restart on the same nodes only repeats it; twice is the rule of thumb of
// the anchors (a single transient error is forgiven). Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ddp::agent {

class BlameBook {
 public:
  static constexpr std::size_t kLimit = 2;
  // Records one blame; true when it is the node's kLimit-th (keep it out now).
  bool blame(std::uint32_t node, std::string why);
  // "CUDA or NCCL error in attempt 0; a straggler in attempt 1"
  std::string reasons(std::uint32_t node) const;

 private:
  std::map<std::uint32_t, std::vector<std::string>> book_;
};

}  // namespace ddp::agent
