// Which tokens each rank trains on (--model gpt): pure, unit-tested.
//
// The token file is read as consecutive windows of `context` tokens, each
// with the token after it as the last target (llm.c's and nanoGPT's
// sequences): window w is tokens [w x context, (w + 1) x context], its
// inputs the first `context`, its targets the last. Step s of a run with
// global batch B trains on windows s x B to s x B + B - 1, modulo the number
// of windows, so one pass reads the file once, in order. The rows of a step
// are dealt out as the images are (each rank a block of B / world rows, each
// micro-batch a block of that): which window a row gets depends only on the
// step and the row, never on the world size. Hence an exact resume from the
// global step alone, on any number of ranks, and one rank with accumulation
// equal to N ranks without it.
#pragma once

#include <cstdint>
#include <span>

#include "ddp/base/result.hpp"

namespace ddp::train {

class TokenWindows {
 public:
  // Needs at least one window: context + 1 tokens.
  static Result<TokenWindows> plan(std::uint64_t tokens, int context, int global_batch);

  std::uint64_t windows() const { return windows_; }
  // The first token of row `row` (0 .. global batch - 1) of step `step`.
  std::uint64_t start(std::int64_t step, int row) const;
  // Passes over the file finished before step `step` (a pass: every window once).
  double passes(std::int64_t step) const;

  // Fills `inputs` and `targets` (rows x context each) with rows first_row
  // .. first_row + rows - 1 of step `step`.
  void fill(std::span<const std::uint16_t> tokens, std::int64_t step, int first_row, int rows, std::uint16_t* inputs,
            std::uint16_t* targets) const;

 private:
  TokenWindows(std::uint64_t windows, int context, int global_batch)
      : windows_(windows), context_(context), batch_(global_batch) {}
  std::uint64_t windows_;
  int context_;
  int batch_;
};

// The rows rank `rank` trains on in micro-batch `micro_index` of a step:
// its first row (the count is `micro`). Rank r holds rows r x micro x accum
// onwards, its micro-batch a the a-th block of `micro` of them.
inline int first_row_of(int rank, int micro, int accum_steps, int micro_index) {
  return (rank * accum_steps + micro_index) * micro;
}

}  // namespace ddp::train
