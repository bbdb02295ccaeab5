// A whole file, plain or gzip-compressed (zlib reads both), bounded: more
// than `max_bytes` once decompressed is an error (a gzip bomb must not take
// the node's memory). The IDX image sets and the texts ddp-tokenize reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

Result<std::vector<std::uint8_t>> read_maybe_gzip(const std::string& path, std::size_t max_bytes);

}  // namespace ddp::train
