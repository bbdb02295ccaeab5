#include "rendezvous/spread.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::agent {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stddev(const std::vector<double>& v) {
  double mean = 0, sq = 0;
  for (const double x : v) mean += x / double(v.size());
  for (const double x : v) sq += (x - mean) * (x - mean) / double(v.size());
  return std::sqrt(sq);
}

std::string json_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xf];
      out += kHex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ddp::agent
