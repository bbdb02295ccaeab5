#include "train/metrics.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace ddp::train {

JsonLine& JsonLine::add(const std::string& k, double value) {
  if (!std::isfinite(value)) {
    object_[k] = nullptr;
    return *this;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  object_[k] = std::strtod(text, nullptr);
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, long long value) {
  object_[k] = value;
  return *this;
}

JsonLine& JsonLine::add(const std::string& k, const std::string& value) {
  object_[k] = value;
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
