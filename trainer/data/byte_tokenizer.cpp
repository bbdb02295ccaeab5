#include "data/byte_tokenizer.hpp"

#include <algorithm>

namespace ddp::train {

std::vector<std::uint16_t> byte_tokens(std::span<const std::uint8_t> text) { return {text.begin(), text.end()}; }

std::size_t held_out_start(std::span<const std::uint8_t> text, double fraction) {
  const auto cut = text.size() - std::min(text.size(), std::size_t(double(text.size()) * fraction));
  if (cut == 0) return 0;
  const auto newline = std::find(text.begin() + std::ptrdiff_t(cut - 1), text.end(), std::uint8_t('\n'));
  return newline == text.end() ? text.size() : std::size_t(newline - text.begin()) + 1;
}

}  // namespace ddp::train
