// --metrics FILE: one JSON object per line, flushed as written, so a crashed
// run keeps every epoch it finished. Rank 0 only.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ddp::train {

class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, long long value);
  JsonLine& add(const std::string& key, const std::string& value);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(const std::string& k);
  std::string body_;
};

class MetricsFile {
 public:
  // append: keep what an earlier attempt wrote (a restarted or resumed run).
  MetricsFile(const std::string& path, bool append);  // errors become warnings
  ~MetricsFile();
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;
  bool open() const { return file_ != nullptr; }
  const std::string& error() const { return error_; }
  void write(const JsonLine& line);

 private:
  std::FILE* file_ = nullptr;
  std::string error_;
};

}  // namespace ddp::train
