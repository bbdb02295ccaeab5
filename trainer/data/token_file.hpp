// Token files: the text a language model trains on, already tokenized
// (ddp-tokenize writes them; ddp-train maps them into memory). Little-endian:
//
//   offset  size  field
//        0     8  magic "DDPTOKEN"
//        8     4  version (1)
//       12     4  vocabulary size, 1 to 65,536 (a token is a uint16)
//       16     8  token count
//       24    16  the tokenizer's name, NUL-padded ("bytes": one token a byte)
//       40    24  zero
//       64     -  the tokens, uint16 each: exactly `count` of them
//
// A vocabulary over 65,536 does not fit a uint16 and is refused by the
// writer and the reader. The reader checks the header, the file's size
// against the count, and every token against the vocabulary, once, so that a
// token can index the embedding table without a check in the step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp::train {

inline constexpr std::size_t kTokenHeaderBytes = 64;
inline constexpr std::uint32_t kMaxVocab = 65536;

struct TokenHeader {
  std::uint32_t version = 1;
  std::uint32_t vocab = 0;
  std::uint64_t count = 0;
  std::string tokenizer;  // at most 15 bytes
  bool operator==(const TokenHeader&) const = default;
};

// The header's 64 bytes, and back; `origin` names the file in errors.
Result<std::vector<std::uint8_t>> encode_token_header(const TokenHeader& h);
Result<TokenHeader> decode_token_header(std::span<const std::uint8_t> bytes, const std::string& origin);

// Writes `tokens` to `path` (through a temporary file renamed into place).
Status write_token_file(const std::string& path, const std::string& tokenizer, std::uint32_t vocab,
                        std::span<const std::uint16_t> tokens);

// A token file mapped read-only, checked whole when opened.
class TokenFile {
 public:
  static Result<TokenFile> open(const std::string& path);
  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;
  ~TokenFile();

  const TokenHeader& header() const { return header_; }
  std::span<const std::uint16_t> tokens() const { return {tokens_, std::size_t(header_.count)}; }
  const std::string& path() const { return path_; }

 private:
  TokenFile() = default;
  void unmap() noexcept;
  TokenHeader header_;
  std::string path_;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const std::uint16_t* tokens_ = nullptr;
};

// --data random: `count` tokens drawn uniformly from [0, vocab) by a
// generator seeded with `seed` (the same seed, the same tokens on every
// rank), for measuring throughput without a text: nothing in them can be
// learned, so the loss stays near ln(vocab).
inline constexpr std::size_t kRandomTokens = (std::size_t(1) << 22) + 1;  // 4,096 windows of 1,024
std::vector<std::uint16_t> random_tokens(std::size_t count, std::uint32_t vocab, std::uint64_t seed);

// Checks what open() checks, on bytes in memory (the fuzz target's entry).
Result<TokenHeader> check_token_bytes(std::span<const std::uint8_t> file, const std::string& origin);

}  // namespace ddp::train
