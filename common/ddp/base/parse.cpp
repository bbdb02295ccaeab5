#include "ddp/base/parse.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace ddp {

std::string_view trim(std::string_view text) {
  const auto blank = " \t\r\n";
  const auto begin = text.find_first_not_of(blank);
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(blank);
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string_view> split_list(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  for (std::size_t start = 0;;) {
    const auto end = text.find(separator, start);
    pieces.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return pieces;
    start = end + 1;
  }
}

std::string printable(std::string_view text, std::size_t max) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max) + 3);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    std::string piece(1, c);
    if (c == '\\')
      piece = "\\\\";
    else if (c == '\n')
      piece = "\\n";
    else if (c == '\t')
      piece = "\\t";
    else if (c == '\r')
      piece = "\\r";
    else if (byte < 0x20 || byte == 0x7f)
      piece = std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    if (out.size() + piece.size() > max) return out + "...";
    out += piece;
  }
  return out;
}

Result<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min, std::uint64_t max, std::string_view what) {
  const auto range = "between " + std::to_string(min) + " and " + std::to_string(max);
  std::uint64_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
    return fail(std::string(what) + "='" + std::string(text) + "' is not a whole number; use a number " + range);
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    return fail(std::string(what) + "=" + std::string(text) + " is out of range; use a number " + range);
  return value;
}

Result<PortRange> parse_port_range(std::string_view text, std::string_view what) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos)
    return fail(std::string(what) + "='" + std::string(text) +
                "' is not a port range; write it as LOW-HIGH, e.g. 20000-29999");
  const auto first = parse_uint(trim(text.substr(0, dash)), 1024, 65535, what);
  if (!first) return fail(first.error());
  const auto last = parse_uint(trim(text.substr(dash + 1)), 1024, 65535, what);
  if (!last) return fail(last.error());
  if (*first > *last)
    return fail(std::string(what) + "=" + std::string(text) + ": the low port is above the high port");
  return PortRange{std::uint16_t(*first), std::uint16_t(*last)};
}

std::string seconds_text(std::chrono::milliseconds ms) {
  const auto n = ms.count();
  return std::to_string(n / 1000) + (n % 1000 ? "." + std::to_string(n % 1000 / 100) : "") + " s";
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace ddp
