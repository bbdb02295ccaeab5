// The bad-node report (ddp/wire/bad_node_report.hpp): what the job's user
// writes into node 0's FIFO, read as root by the plugin before it runs the
// site's BadNodeHook.
#include <set>
#include <string>

#include "ddp/wire/bad_node_report.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = ddp::fuzz::as_text(data, size);
  const auto in_step = [](const std::string& node) { return node.size() <= 8 && node.starts_with("n"); };
  const auto report = ddp::read_bad_node_report(text, in_step);
  FUZZ_CHECK(ddp::refused_summary(report).find('\n') == std::string::npos);  // one line of slurmd's log
  std::set<std::string> seen;
  for (const auto& bad : report.nodes) {
    FUZZ_CHECK(in_step(bad.node));                         // only the step's nodes reach the hook
    FUZZ_CHECK(seen.insert(bad.node).second);              // each once
    FUZZ_CHECK(bad.reasons.size() <= ddp::kMaxReasonChars);
    for (const unsigned char c : bad.node + bad.reasons) FUZZ_CHECK(c >= 0x20 && c < 0x7f);  // plain text
    // What the agent writes for it reads back the same.
    const auto again = ddp::read_bad_node_report(ddp::bad_node_line(bad), in_step);
    FUZZ_CHECK(again.nodes.size() == 1 && again.nodes[0] == bad && again.refused == 0);
    FUZZ_CHECK(ddp::plain_reason(bad.reasons) == bad.reasons);  // one encoding: already plain
  }
  return 0;
}
