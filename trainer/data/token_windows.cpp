#include "data/token_windows.hpp"

#include <algorithm>
#include <string>

namespace ddp::train {

Result<TokenWindows> TokenWindows::plan(std::uint64_t tokens, int context, int global_batch) {
  if (context <= 0 || global_batch <= 0) return fail("the context and the batch must be positive");
  if (tokens < std::uint64_t(context) + 1)
    return fail("the token file holds " + std::to_string(tokens) + " tokens, fewer than one window of context " +
                std::to_string(context) + " and its next token: give a longer text or a smaller --gpt-context");
  return TokenWindows((tokens - 1) / std::uint64_t(context), context, global_batch);
}

std::uint64_t TokenWindows::start(std::int64_t step, int row) const {
  const std::uint64_t index = std::uint64_t(step) * std::uint64_t(batch_) + std::uint64_t(row);
  return (index % windows_) * std::uint64_t(context_);
}

double TokenWindows::passes(std::int64_t step) const {
  return double(std::uint64_t(step) * std::uint64_t(batch_)) / double(windows_);
}

void TokenWindows::fill(std::span<const std::uint16_t> tokens, std::int64_t step, int first_row, int rows,
                        std::uint16_t* inputs, std::uint16_t* targets) const {
  for (int r = 0; r < rows; ++r) {
    const std::uint16_t* window = tokens.data() + start(step, first_row + r);
    std::copy(window, window + context_, inputs + std::size_t(r) * std::size_t(context_));
    std::copy(window + 1, window + context_ + 1, targets + std::size_t(r) * std::size_t(context_));
  }
}

}  // namespace ddp::train
