#include "ddp/wire/bad_node_report.hpp"

#include <algorithm>
#include <variant>

#include "ddp/wire/rdzv_protocol.hpp"

namespace ddp {

std::string bad_node_line(const BadNode& bad) {
  return "node=" + rdzv::percent_encode(bad.node) + " reasons=" + rdzv::percent_encode(bad.reasons) + "\n";
}

namespace {

bool plain_text(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
}

// One line, or why it is refused.
std::variant<BadNode, std::string> read_line(std::string_view line,
                                             const std::function<bool(const std::string&)>& in_step) {
  constexpr std::string_view kNode = "node=", kReasons = " reasons=";
  const auto split = line.find(kReasons);
  if (!line.starts_with(kNode) || split == std::string_view::npos) return std::string("not node=NAME reasons=TEXT");
  auto node = rdzv::percent_decode(line.substr(kNode.size(), split - kNode.size()));
  auto reasons = rdzv::percent_decode(line.substr(split + kReasons.size()));
  if (!node || !reasons) return std::string("a value that is not percent-encoded");
  if (node->empty() || node->size() > 255 || !plain_text(*node) || node->find(' ') != std::string::npos)
    return std::string("not a node name");
  if (!in_step(*node)) return "node " + *node + " is not a node of this step";
  if (reasons->size() > kMaxReasonChars || !plain_text(*reasons))
    return "the reason for " + *node + " is not plain text of " + std::to_string(kMaxReasonChars) +
           " characters at most";
  return BadNode{*node, *reasons};
}

}  // namespace

BadNodeReport read_bad_node_report(std::string_view text, const std::function<bool(const std::string&)>& in_step) {
  BadNodeReport report;
  if (text.size() > kMaxReportBytes) {
    report.refused.push_back("the report is larger than " + std::to_string(kMaxReportBytes) + " bytes: read no further");
    text = text.substr(0, text.rfind('\n', kMaxReportBytes) + 1);
  }
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++number;
    if (line.empty()) continue;
    auto got = read_line(line, in_step);
    if (auto* why = std::get_if<std::string>(&got)) {
      report.refused.push_back("line " + std::to_string(number) + ": " + *why);
      continue;
    }
    auto& bad = std::get<BadNode>(got);
    const bool seen = std::any_of(report.nodes.begin(), report.nodes.end(),
                                  [&](const BadNode& b) { return b.node == bad.node; });
    if (!seen) report.nodes.push_back(std::move(bad));
  }
  return report;
}

}  // namespace ddp
