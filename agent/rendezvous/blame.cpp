#include "rendezvous/blame.hpp"

namespace ddp::agent {

bool BlameBook::blame(std::uint32_t node, std::string why) {
  auto& reasons = book_[node];
  reasons.push_back(std::move(why));
  return reasons.size() == kLimit;
}

std::string BlameBook::reasons(std::uint32_t node) const {
  const auto it = book_.find(node);
  std::string text;
  if (it == book_.end()) return text;
  for (const auto& why : it->second) text += (text.empty() ? "" : "; ") + why;
  return text;
}

}  // namespace ddp::agent
