// IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed (zlib reads both).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

// An unsigned-byte IDX array: dims (e.g. {60000, 28, 28}) and the bytes.
struct IdxArray {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;
  std::size_t items() const { return dims.empty() ? 0 : dims[0]; }
  std::size_t item_size() const;  // product of dims[1..]
};

// Parses IDX bytes (already decompressed); `origin` names the file in errors.
Result<IdxArray> parse_idx(const std::vector<std::uint8_t>& bytes, const std::string& origin);

// Reads and parses a .idx or .idx.gz file. Bounded: more than `max_bytes`
// decompressed is an error (a gzip bomb must not take the node's memory).
Result<IdxArray> read_idx(const std::string& path, std::size_t max_bytes = std::size_t(1) << 30);

}  // namespace ddp::train
