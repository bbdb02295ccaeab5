#include "ddp/wire/rdzv_protocol.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ddp/base/parse.hpp"

namespace ddp::rdzv {

namespace {

constexpr char kHexUpper[] = "0123456789ABCDEF";
constexpr char kHexLower[] = "0123456789abcdef";
constexpr std::size_t kQuoteBytes = 40;  // how much of a peer's input an error message may show

bool value_byte_ok(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c != '\0' && std::strchr("._:/,+@-", c) != nullptr);
}

bool verb_ok(std::string_view verb) {
  if (verb.empty() || verb.size() > kMaxNameBytes) return false;
  for (const char c : verb)
    if (!((c >= 'A' && c <= 'Z') || c == '_')) return false;
  return true;
}

bool key_ok(std::string_view key) {
  if (key.empty() || key.size() > kMaxNameBytes) return false;
  for (const char c : key)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Upper-case hex only: the canonical escape, so each value has exactly one encoding.
int upper_hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A peer's bytes for an error message: at most kQuoteBytes of them, printable ASCII as
// is and everything else as \xNN, so a message never carries a newline, a terminal
// escape or a 16 KiB line into a log.
std::string quote(std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kQuoteBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHexLower[c >> 4];
      out += kHexLower[c & 0xf];
    }
  }
  out += text.size() > kQuoteBytes ? "'..." : "'";
  return out;
}


Status check_hex(std::string_view text, std::size_t chars, std::string_view what) {
  if (text.size() != chars)
    return fail(std::string(what) + " is " + std::to_string(text.size()) + " characters long; it must be " +
                std::to_string(chars) + " hex characters");
  for (std::size_t i = 0; i < text.size(); ++i)
    if (!is_hex_digit(text[i]))
      return fail(std::string(what) + " has a character that is not a hex digit at position " + std::to_string(i + 1) +
                  "; it must be " + std::to_string(chars) + " hex characters");
  return Ok{};
}

// The domain-separated string a MAC covers; see the header. The fixed prefix names the
// protocol and its version, `role` keeps client and server MACs apart, and the
// percent-encoding keeps every variable part free of spaces, so the string is a
// one-to-one function of its inputs.
std::string mac_input(std::string_view role, std::string_view run_id, std::uint32_t node, std::string_view server_nonce,
                      std::string_view client_nonce) {
  return "slurm-ddp rdzv v" + std::to_string(kAuthVersion) + " " + std::string(role) +
         " run=" + percent_encode(run_id) + " node=" + std::to_string(node) +
         " snonce=" + percent_encode(server_nonce) + " cnonce=" + percent_encode(client_nonce);
}


[[noreturn]] void die_without_entropy(const char* what) {
  std::fprintf(stderr, "ddp: no source of random numbers (%s: %s); cannot make authentication nonces\n", what,
               std::strerror(errno));
  std::abort();
}

// /dev/urandom, for kernels (or seccomp sandboxes) without getrandom(2).
void urandom_fill(unsigned char* data, std::size_t size) {
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) die_without_entropy("open /dev/urandom");
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0) errno = EIO;
      die_without_entropy("read /dev/urandom");
    }
  }
  ::close(fd);
}

}  // namespace

// ---------------------------------------------------------------------------
// Messages

std::string percent_encode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (const char ch : raw) {
    const auto c = static_cast<unsigned char>(ch);
    if (value_byte_ok(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHexUpper[c >> 4];
      out += kHexUpper[c & 0xf];
    }
  }
  return out;
}

Result<std::string> percent_decode(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const auto c = static_cast<unsigned char>(encoded[i]);
    if (c == '%') {
      const int hi = i + 1 < encoded.size() ? upper_hex_value(encoded[i + 1]) : -1;
      const int lo = i + 2 < encoded.size() ? upper_hex_value(encoded[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return fail("bad %-escape at byte " + std::to_string(i + 1) +
                    ": '%' must be followed by two upper-case hex digits");
      const auto byte = static_cast<unsigned char>(hi << 4 | lo);
      if (value_byte_ok(byte))
        return fail("needless %-escape at byte " + std::to_string(i + 1) + ": '" + std::string(1, char(byte)) +
                    "' is written as itself");
      out += static_cast<char>(byte);
      i += 2;
    } else if (value_byte_ok(c)) {
      out += static_cast<char>(c);
    } else {
      return fail("byte " + std::to_string(i + 1) + " (" + quote(encoded.substr(i, 1)) +
                  ") must be %-escaped; a value holds only A-Z a-z 0-9 . _ : / , + @ - and %XX");
    }
  }
  return out;
}

std::optional<std::string> Message::get(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return std::nullopt;
}

Result<std::uint64_t> Message::get_uint(std::string_view key, std::uint64_t min, std::uint64_t max) const {
  const auto text = get(key);
  const auto name = verb + " " + std::string(key);
  if (!text) return fail(verb + ": the field '" + std::string(key) + "' is missing");
  const auto range = "between " + std::to_string(min) + " and " + std::to_string(max);
  std::uint64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (text->empty() || ec == std::errc::invalid_argument || ptr != end)
    return fail(name + "=" + quote(*text) + " is not a whole number " + range);
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    return fail(name + "=" + quote(*text) + " is out of range: it must be " + range);
  return value;
}

// A list of numbers in runs: "7" one number, "0-5" an ascending range,
// "2x16" a number repeated. One line holds thousands of nodes this way, where
// one number per node would stop fitting at a few thousand.
Result<std::vector<std::uint32_t>> parse_runs(std::string_view text, std::uint32_t min, std::uint32_t max,
                                              std::size_t max_items, std::string_view what) {
  const auto name = std::string(what);
  const auto number = [&](std::string_view t, std::uint64_t lo, std::uint64_t hi) -> Result<std::uint64_t> {
    return parse_uint(t, lo, hi, name);
  };
  std::vector<std::uint32_t> values;
  for (const auto run : split_list(text)) {
    const auto dash = run.find('-'), times = run.find('x');
    const auto shown = "'" + printable(run, 40) + "'";
    std::uint64_t first = 0, count = 1, step = 0;
    if (dash != std::string_view::npos) {  // "A-B", A < B
      const auto a = number(run.substr(0, dash), min, max), b = number(run.substr(dash + 1), min, max);
      if (!a || !b || *a >= *b) return fail(name + ": " + shown + " is not a range A-B with A < B");
      first = *a, count = *b - *a + 1, step = 1;
    } else if (times != std::string_view::npos) {  // "VxN", N >= 2
      const auto v = number(run.substr(0, times), min, max);
      const auto repeat = number(run.substr(times + 1), 2, max_items);
      if (!v || !repeat) return fail(name + ": " + shown + " is not VALUExCOUNT");
      first = *v, count = *repeat;
    } else {
      const auto v = number(run, min, max);
      if (!v) return fail(v.error());
      first = *v;
    }
    if (values.size() + count > max_items) return fail(name + " has more than " + std::to_string(max_items) + " numbers");
    // Filled in place: a START at 16,384 nodes lists 16,384 of them, and
    // every node parses it (a push_back each would be a sixth of the CPU of
    // bench/rdzv_swarm.cpp, where 16,383 nodes share one process).
    const auto at = values.size();
    values.resize(at + count);
    for (std::uint64_t i = 0; i < count; ++i) values[at + i] = std::uint32_t(first + i * step);
  }
  return values;
}

std::string format_runs(const std::vector<std::uint32_t>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t up = 1, same = 1;
    while (i + up < values.size() && values[i + up] == values[i] + up) ++up;
    while (i + same < values.size() && values[i + same] == values[i]) ++same;
    text += text.empty() ? "" : ",";
    if (up >= 3) {
      text += std::to_string(values[i]) + "-" + std::to_string(values[i + up - 1]);
      i += up;
    } else if (same >= 3) {
      text += std::to_string(values[i]) + "x" + std::to_string(same);
      i += same;
    } else {
      text += std::to_string(values[i]);
      i += 1;
    }
  }
  return text;
}

Result<std::vector<std::uint32_t>> Message::get_uint_list(std::string_view key, std::uint32_t min, std::uint32_t max,
                                                           std::size_t max_items) const {
  const auto text = get(key);
  if (!text) return fail(verb + ": the field '" + std::string(key) + "' is missing");
  return parse_runs(*text, min, max, max_items, verb + " " + std::string(key));
}

Message& Message::set(std::string key, const std::vector<std::uint32_t>& values) {
  return set(std::move(key), format_runs(values));
}

Message& Message::set(std::string key, std::string value) {
  for (auto& [k, v] : fields) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  fields.emplace_back(std::move(key), std::move(value));
  return *this;
}

Message& Message::set(std::string key, std::uint64_t value) { return set(std::move(key), std::to_string(value)); }

std::string encode(const Message& m) {
  if (!verb_ok(m.verb) || m.fields.size() > kMaxFields) return "";
  std::string line = m.verb;
  for (std::size_t i = 0; i < m.fields.size(); ++i) {
    const auto& [key, value] = m.fields[i];
    if (!key_ok(key)) return "";
    for (std::size_t j = 0; j < i; ++j)
      if (m.fields[j].first == key) return "";
    line += ' ';
    line += key;
    line += '=';
    line += percent_encode(value);
    if (line.size() > kMaxLineBytes) return "";  // stop early on a huge value
  }
  line += '\n';
  return line;
}

Result<Message> decode(std::string_view line) {
  if (line.size() > kMaxLineBytes)
    return fail("a line of " + std::to_string(line.size()) + " bytes; the limit is " + std::to_string(kMaxLineBytes));
  if (!line.empty() && line.back() == '\r')
    return fail("the line ends with a carriage return (CRLF); protocol lines end with a bare newline");
  if (line.empty()) return fail("an empty line; expected VERB key=value ...");

  const auto verb_end = std::min(line.find(' '), line.size());
  Message m;
  m.verb = std::string(line.substr(0, verb_end));
  if (!verb_ok(m.verb))
    return fail("bad verb " + quote(m.verb) + ": a verb is 1-" + std::to_string(kMaxNameBytes) +
                " characters A-Z or _");

  std::size_t pos = verb_end;
  while (pos < line.size()) {
    // line[pos] is the space before the next field.
    const auto start = pos + 1;
    const auto end = std::min(line.find(' ', start), line.size());
    const auto field = line.substr(start, end - start);
    pos = end;
    if (field.empty())
      return fail(m.verb + ": a stray or doubled space at byte " + std::to_string(end < line.size() ? end + 1 : start) +
                  "; fields are separated by one space");
    if (m.fields.size() == kMaxFields) return fail(m.verb + ": more than " + std::to_string(kMaxFields) + " fields");
    const auto eq = field.find('=');
    if (eq == std::string_view::npos) return fail(m.verb + ": the field " + quote(field) + " has no '='");
    const auto key = field.substr(0, eq);
    if (!key_ok(key))
      return fail(m.verb + ": bad key " + quote(key) + ": a key is 1-" + std::to_string(kMaxNameBytes) +
                  " characters a-z, 0-9 or _");
    if (m.get(key)) return fail(m.verb + ": the key '" + std::string(key) + "' appears twice");
    auto value = percent_decode(field.substr(eq + 1));
    if (!value) return fail(m.verb + " " + std::string(key) + ": " + value.error());
    m.fields.emplace_back(std::string(key), std::move(value).value());
  }
  return m;
}

// ---------------------------------------------------------------------------
// LineReader

Status LineReader::feed(std::string_view bytes) {
  const auto too_long = "a line longer than " + std::to_string(max_line_) + " bytes; closing the connection";
  if (poisoned_) return fail("after " + too_long);
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const auto nl = bytes.find('\n', pos);
    const auto piece = bytes.substr(pos, (nl == std::string_view::npos ? bytes.size() : nl) - pos);
    if (partial_.size() + piece.size() > max_line_) {
      // Drop everything: the connection is done for, and its buffers should not outlive the verdict.
      poisoned_ = true;
      lines_.clear();
      partial_.clear();
      partial_.shrink_to_fit();
      buffered_ = 0;
      return fail(too_long);
    }
    partial_ += piece;
    if (nl == std::string_view::npos) break;
    lines_.push_back(std::move(partial_));
    partial_.clear();
    pos = nl + 1;
  }
  buffered_ += bytes.size();
  return Ok{};
}

std::optional<std::string> LineReader::next() {
  if (poisoned_ || lines_.empty()) return std::nullopt;
  std::string line = std::move(lines_.front());
  lines_.pop_front();
  buffered_ -= line.size() + 1;
  return line;
}

std::size_t LineReader::buffered() const { return buffered_; }

// ---------------------------------------------------------------------------
// Authentication

std::string to_hex(const unsigned char* data, std::size_t size) {
  std::string out;
  out.reserve(2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    out += kHexLower[data[i] >> 4];
    out += kHexLower[data[i] & 0xf];
  }
  return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  // An empty key would still give a MAC, one anybody can compute: refuse it here too.
  if (key.empty() || key.size() > INT_MAX) return "";
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), out, &len) == nullptr)
    return "";
  return to_hex(out, len);
}

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  std::size_t got = 0;
  while (got < bytes) {
    // Flags 0: blocks only until the kernel's pool is first initialised (early boot).
    const ssize_t n = ::getrandom(buf.data() + got, bytes - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == ENOSYS) {
      urandom_fill(buf.data() + got, bytes - got);
      got = bytes;
    } else {
      die_without_entropy("getrandom");
    }
  }
  return to_hex(buf.data(), buf.size());
}

std::string client_mac(std::string_view secret, std::string_view run_id, std::uint32_t node,
                       std::string_view server_nonce, std::string_view client_nonce) {
  return hmac_sha256_hex(secret, mac_input("client-mac", run_id, node, server_nonce, client_nonce));
}

std::string server_mac(std::string_view secret, std::string_view run_id, std::uint32_t node,
                       std::string_view server_nonce, std::string_view client_nonce) {
  return hmac_sha256_hex(secret, mac_input("server-mac", run_id, node, server_nonce, client_nonce));
}

bool mac_equal(std::string_view a, std::string_view b) {
  // The lengths are public (a MAC's length is fixed); only the contents need constant time.
  if (a.empty() || a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status check_secret(std::string_view secret) { return check_hex(secret, 64, "the job secret (SLURM_DDP_SECRET)"); }

Status check_nonce(std::string_view nonce) { return check_hex(nonce, 2 * kNonceBytes, "the nonce"); }

}  // namespace ddp::rdzv
