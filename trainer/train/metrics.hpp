// --metrics FILE: one JSON object per line, flushed as written, so a crashed
// run keeps every epoch it finished. Rank 0 only.
#pragma once

#include <cstdio>
#include <string>

#include "ddp/base/json.hpp"

namespace ddp::train {

// One record, its keys in the order added. A double keeps 9 significant
// digits (as the log's figures come from the same float math, more would be
// noise); one that is not finite (a diverged loss) is null, as JSON has no NaN.
class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, long long value);
  JsonLine& add(const std::string& key, const std::string& value);
  std::string str() const { return json_line(object_); }

 private:
  JsonObject object_ = JsonObject::object();
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
