#include "train/metrics.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace ddp::train {

void JsonLine::key(const std::string& k) {
  if (!body_.empty()) body_ += ",";
  body_ += "\"" + k + "\":";
}

JsonLine& JsonLine::add(const std::string& k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    body_ += "null";  // JSON has no NaN: a diverged loss is still valid JSON
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  body_ += buf;
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, long long value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, const std::string& value) {
  key(k);
  body_ += "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      body_ += '\\';
      body_ += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      body_ += buf;
    } else {
      body_ += c;
    }
  }
  body_ += "\"";
  return *this;
}

MetricsFile::MetricsFile(const std::string& path, bool append) {
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) error_ = "--metrics " + path + ": " + std::strerror(errno);
}

MetricsFile::~MetricsFile() {
  if (file_) std::fclose(file_);
}

void MetricsFile::write(const JsonLine& line) {
  if (!file_) return;
  std::fprintf(file_, "%s\n", line.str().c_str());
  std::fflush(file_);
}

}  // namespace ddp::train
