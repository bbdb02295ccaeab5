// The tokenizer ddp-tokenize writes token files with: one token a byte
// (vocabulary 256; UTF-8 text becomes its bytes), and where a text's
// held-out part begins. Pure: the program does the files (tools/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ddp::train {

inline constexpr std::uint32_t kByteVocab = 256;
inline constexpr const char* kByteTokenizer = "bytes";

std::vector<std::uint16_t> byte_tokens(std::span<const std::uint8_t> text);

// Where the held-out part of `text` begins: the last `fraction` (0 < f < 1)
// of its bytes, moved forward to the start of a line, so that no line is
// split between the two parts; text.size() when no line starts there.
std::size_t held_out_start(std::span<const std::uint8_t> text, double fraction);

}  // namespace ddp::train
