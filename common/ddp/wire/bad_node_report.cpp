#include "ddp/wire/bad_node_report.hpp"

#include <algorithm>
#include <variant>

#include "ddp/wire/rdzv_protocol.hpp"

namespace ddp {

namespace {

bool plain_char(unsigned char c) { return c >= 0x20 && c < 0x7f; }

bool plain_text(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return plain_char(c); });
}

}  // namespace

std::string plain_reason(std::string_view reason) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(reason.size(), kMaxReasonChars));
  // Pieces are added while they leave room for the marker; once one does not,
  // the reason is cut there, unless the rest fits whole.
  std::size_t fits = std::string::npos;  // out's size when the marker last fitted after it
  for (const char c : reason) {
    const auto byte = static_cast<unsigned char>(c);
    const std::string piece = plain_char(byte) ? std::string(1, c) : std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    if (out.size() + kReasonCut.size() <= kMaxReasonChars) fits = out.size();
    out += piece;
    if (out.size() > kMaxReasonChars) {
      out.resize(fits);
      return out + std::string(kReasonCut);
    }
  }
  return out;
}

std::string bad_node_line(const BadNode& bad) {
  return "node=" + rdzv::percent_encode(bad.node) + " reasons=" + rdzv::percent_encode(plain_reason(bad.reasons)) +
         "\n";
}

namespace {

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
  return BadNode{*node, plain_reason(*reasons)};
}

}  // namespace

BadNodeReport read_bad_node_report(std::string_view text, const std::function<bool(const std::string&)>& in_step) {
  BadNodeReport report;
  if (text.size() > kMaxReportBytes) {
    report.cut = true;
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
      if (report.refused++ == 0) report.first_refused = "line " + std::to_string(number) + ": " + *why;
      continue;
    }
    auto& bad = std::get<BadNode>(got);
    const bool seen = std::any_of(report.nodes.begin(), report.nodes.end(),
                                  [&](const BadNode& b) { return b.node == bad.node; });
    if (!seen) report.nodes.push_back(std::move(bad));
  }
  return report;
}

std::string refused_summary(const BadNodeReport& report) {
  const std::string cut =
      report.cut ? "node 0's report is larger than " + std::to_string(kMaxReportBytes) + " bytes: read no further" : "";
  if (report.refused == 0) return cut;
  const std::string lines = report.refused == 1 ? "1 line of node 0's report was" :
                                                  std::to_string(report.refused) + " lines of node 0's report were";
  return lines + " refused (first: " + report.first_refused + ")" + (cut.empty() ? "" : "; " + cut);
}

}  // namespace ddp
