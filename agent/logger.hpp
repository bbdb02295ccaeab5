// The agent's own messages ("ddp-agent: error: ..."), written through the
// sink of its stderr (workers/sink.hpp): in order with the workers' stderr
// lines, and never blocking the agent when the reader pauses.
#pragma once

#include <memory>

#include "node/workers/sink.hpp"

namespace ddp::agent {

// Makes spdlog's default logger write to `fd` through a new sink, which it
// returns for the output router to share (OutputOptions::err_sink).
std::shared_ptr<Sink> log_through_sink(int fd);

}  // namespace ddp::agent
