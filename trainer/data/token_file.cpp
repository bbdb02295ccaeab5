#include "data/token_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

namespace ddp::train {

// The tokens are read and written as the host holds them (x86-64, aarch64).
static_assert(std::endian::native == std::endian::little, "token files are little-endian");

namespace {

constexpr char kMagic[8] = {'D', 'D', 'P', 'T', 'O', 'K', 'E', 'N'};
constexpr std::size_t kNameBytes = 16;

template <typename T>
void put(std::vector<std::uint8_t>& out, std::size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}

template <typename T>
T get(std::span<const std::uint8_t> in, std::size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof value);
  return value;
}

std::string vocab_refusal(std::uint32_t vocab) {
  return "a vocabulary of " + std::to_string(vocab) + " tokens (a token file holds 1 to 65,536: one uint16 a token)";
}

}  // namespace

Result<std::vector<std::uint8_t>> encode_token_header(const TokenHeader& h) {
  if (h.vocab == 0 || h.vocab > kMaxVocab) return fail(vocab_refusal(h.vocab));
  if (h.tokenizer.empty() || h.tokenizer.size() >= kNameBytes || h.tokenizer.find('\0') != std::string::npos)
    return fail("a tokenizer's name is 1 to 15 bytes, no NUL: '" + h.tokenizer + "'");
  std::vector<std::uint8_t> out(kTokenHeaderBytes, 0);
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  put(out, 8, h.version);
  put(out, 12, h.vocab);
  put(out, 16, h.count);
  std::memcpy(out.data() + 24, h.tokenizer.data(), h.tokenizer.size());
  return out;
}

Result<TokenHeader> decode_token_header(std::span<const std::uint8_t> b, const std::string& origin) {
  if (b.size() < kTokenHeaderBytes || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    return fail(origin + ": not a token file (no DDPTOKEN header); make one with ddp-tokenize");
  TokenHeader h;
  h.version = get<std::uint32_t>(b, 8);
  if (h.version != 1)
    return fail(origin + ": token file version " + std::to_string(h.version) + ", this ddp-train reads 1");
  h.vocab = get<std::uint32_t>(b, 12);
  if (h.vocab == 0 || h.vocab > kMaxVocab) return fail(origin + ": " + vocab_refusal(h.vocab));
  h.count = get<std::uint64_t>(b, 16);
  const auto* name = reinterpret_cast<const char*>(b.data() + 24);
  h.tokenizer.assign(name, strnlen(name, kNameBytes));
  if (h.tokenizer.empty() || h.tokenizer.size() == kNameBytes)
    return fail(origin + ": the tokenizer's name is malformed");
  if (std::any_of(b.begin() + 40, b.begin() + kTokenHeaderBytes, [](std::uint8_t x) { return x != 0; }))
    return fail(origin + ": reserved header bytes are not zero (a newer format?)");
  return h;
}

Result<TokenHeader> check_token_bytes(std::span<const std::uint8_t> file, const std::string& origin) {
  auto header = decode_token_header(file, origin);
  if (!header) return header;
  const std::uint64_t data = file.size() - kTokenHeaderBytes;
  if (header->count > data / 2 || data != header->count * 2)
    return fail(origin + ": the header says " + std::to_string(header->count) + " tokens, the file holds " +
                std::to_string(data) + " bytes after it (truncated or not a token file?)");
  for (std::uint64_t i = 0; i < header->count; ++i) {
    const auto token = get<std::uint16_t>(file, kTokenHeaderBytes + 2 * i);
    if (token >= header->vocab)
      return fail(origin + ": token " + std::to_string(i) + " is " + std::to_string(token) +
                  ", outside the vocabulary of " + std::to_string(header->vocab));
  }
  return header;
}

Status write_token_file(const std::string& path, const std::string& tokenizer, std::uint32_t vocab,
                        std::span<const std::uint16_t> tokens) {
  auto header = encode_token_header({1, vocab, tokens.size(), tokenizer});
  if (!header) return fail(path + ": " + header.error());
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] >= vocab) return fail(path + ": token " + std::to_string(i) + " is outside the vocabulary");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(header->data()), std::streamsize(header->size()));
    out.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size_bytes()));
    if (!out.flush()) {
      std::remove(tmp.c_str());
      return fail("cannot write " + tmp + ": " + std::strerror(errno));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return fail("cannot rename " + tmp + " to " + path + ": " + why);
  }
  return Ok{};
}

Result<TokenFile> TokenFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < off_t(kTokenHeaderBytes)) {
    ::close(fd);
    return fail(path + ": not a token file (no DDPTOKEN header); make one with ddp-tokenize");
  }
  void* map = ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return fail("cannot map " + path + ": " + std::strerror(map_errno));
  TokenFile file;
  file.map_ = map;
  file.map_bytes_ = std::size_t(st.st_size);
  file.path_ = path;
  auto header = check_token_bytes({static_cast<const std::uint8_t*>(map), file.map_bytes_}, path);
  if (!header) return fail(header.error());  // `file` unmaps
  file.header_ = std::move(header).value();
  file.tokens_ = reinterpret_cast<const std::uint16_t*>(static_cast<const std::uint8_t*>(map) + kTokenHeaderBytes);
  return file;
}

TokenFile::TokenFile(TokenFile&& other) noexcept
    : header_(std::move(other.header_)),
      path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      tokens_(std::exchange(other.tokens_, nullptr)) {}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    unmap();
    header_ = std::move(other.header_);
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    tokens_ = std::exchange(other.tokens_, nullptr);
  }
  return *this;
}

TokenFile::~TokenFile() { unmap(); }

std::vector<std::uint16_t> random_tokens(std::size_t count, std::uint32_t vocab, std::uint64_t seed) {
  std::mt19937_64 gen(seed ^ 0x7a11d0c5ULL);
  std::uniform_int_distribution<std::uint32_t> token(0, vocab - 1);
  std::vector<std::uint16_t> tokens(count);
  for (auto& t : tokens) t = std::uint16_t(token(gen));
  return tokens;
}

void TokenFile::unmap() noexcept {
  if (map_) ::munmap(map_, map_bytes_);
  map_ = nullptr;
}

}  // namespace ddp::train
