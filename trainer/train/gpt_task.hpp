// The language model's part of training (--model gpt) for the loop
// (loop.hpp): optimizer steps over the windows TokenWindows deals this rank,
// each step a forward and backward per micro-batch, the gradient buckets
// all-reduced while backward goes on, the clipped AdamW update at the
// schedule's rate; its results read at once (the update waits for the
// gradient's norm anyway); a line every --log-every steps, the held-out loss
// every --eval-every steps and at the end. One epoch of --steps steps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/token_file.hpp"
#include "data/token_windows.hpp"
#include "process_group/bootstrap.hpp"
#include "train/gpt_trainer.hpp"
#include "train/loop.hpp"
#include "train/metrics.hpp"

namespace ddp::train {

// The tokens training reads: a token file mapped, or --data random's.
struct TokenStream {
  std::optional<TokenFile> file;
  TokenHeader random_header;  // --data random
  std::vector<std::uint16_t> random;
  const TokenHeader& header() const { return file ? file->header() : random_header; }
  std::span<const std::uint16_t> tokens() const { return file ? file->tokens() : std::span(random); }
  std::string path() const { return file ? file->path() : "random"; }
};

struct TokenData {
  TokenStream train;
  std::optional<TokenFile> held_out;  // --eval-data
};

// Parameters and AdamW's two moments, `count` floats each, in ops memory.
struct GptState {
  OpsArray<float> params, m, v;
  std::size_t count = 0;
};

// Borrows what it is given but `state`; `start`: where the run begins (a
// snapshot's global step, or 0); `resumed`: from a snapshot. `metrics`: rank
// 0's --metrics file, or null.
std::unique_ptr<TrainingTask> make_gpt_task(const TrainOptions& o, const WorkerIdentity& id, const GptPlan& plan,
                                            const TokenData& data, const TokenWindows& windows, Backend& b,
                                            GptState state, const ResumePoint& start, bool resumed,
                                            MetricsFile* metrics);

// A resume point of a run that counts steps: its place is its global step.
ResumePoint gpt_position(const ResumePoint& at);

}  // namespace ddp::train
