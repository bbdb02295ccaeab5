#include "train/snapshot_meta.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <optional>

#include "ddp/base/parse.hpp"

namespace ddp::train {
namespace {

constexpr const char* kFormat = "1";

// Reads fields one by one, keeping the first error and giving defaults after
// it, so that from_meta reads like the list of fields it checks.
class FieldReader {
 public:
  FieldReader(const std::map<std::string, std::string>& meta, const std::string& path) : meta_(meta), path_(path) {}

  std::string text(const std::string& field) {
    const auto it = meta_.find(field);
    if (it != meta_.end()) return it->second;
    refuse(path_ + ": the snapshot has no '" + field + "' field");
    return "";
  }
  // A whole number in [min, max].
  std::uint64_t number(const std::string& field, std::uint64_t min, std::uint64_t max) {
    const std::string value = text(field);
    if (error_) return min;
    auto parsed = parse_uint(value, min, max, field);
    if (parsed) return *parsed;
    refuse(path_ + ": snapshot field " + parsed.error());
    return min;
  }
  // A finite decimal number, not below 0.
  float real(const std::string& field) {
    const std::string value = text(field);
    if (error_) return 0;
    float parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (!value.empty() && ec == std::errc() && end == value.data() + value.size() && std::isfinite(parsed) &&
        parsed >= 0)
      return parsed;
    refuse(path_ + ": snapshot field " + field + "='" + value + "' is not a decimal number");
    return 0;
  }
  void expect(const std::string& field, const std::string& wanted, const std::string& why) {
    const std::string value = text(field);
    if (!error_ && value != wanted) refuse(path_ + ": snapshot field " + field + "=" + value + why);
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  void refuse(const std::string& what) {
    if (error_) return;
    error_ = what +
             ": the file is damaged or was not written by ddp-train; move it out of the --snapshot-dir to resume "
             "from an older snapshot, or use --no-resume to start over";
  }
  const std::map<std::string, std::string>& meta_;
  const std::string& path_;
  std::optional<std::string> error_;
};

}  // namespace

std::map<std::string, std::string> to_meta(const SnapshotMeta& m) {
  return {{"format", kFormat},
          {"model", m.model},
          {"optimizer", m.optimizer},
          {"lr", std::to_string(m.lr)},
          {"batch_size", std::to_string(m.batch_size)},
          {"accum_steps", std::to_string(m.accum_steps)},
          {"world_size", std::to_string(m.world_size)},
          {"epoch", std::to_string(m.position.epoch)},
          {"step_in_epoch", std::to_string(m.position.step_in_epoch)},
          {"global_step", std::to_string(m.position.global_step)},
          {"adam_step", std::to_string(m.position.adam_step)},
          {"sampler_seed", std::to_string(m.sampler_seed)},
          {"shuffle", m.shuffle ? "1" : "0"},
          {"data", m.data}};
}

Result<SnapshotMeta> from_meta(const std::map<std::string, std::string>& meta, const std::string& path) {
  FieldReader read(meta, path);
  read.expect("format", kFormat, " is not " + std::string(kFormat) + ", the only format this ddp-train reads");
  SnapshotMeta m;
  m.model = read.text("model");
  m.optimizer = read.text("optimizer");
  m.lr = read.real("lr");
  m.batch_size = int(read.number("batch_size", 1, INT_MAX));
  m.accum_steps = int(read.number("accum_steps", 1, INT_MAX));
  m.world_size = int(read.number("world_size", 1, INT_MAX));
  m.position.epoch = int(read.number("epoch", 0, INT_MAX - 1));
  m.position.step_in_epoch = (long long)read.number("step_in_epoch", 0, LLONG_MAX);
  m.position.global_step = (long long)read.number("global_step", 0, LLONG_MAX);
  m.position.adam_step = int(read.number("adam_step", 0, INT_MAX));
  m.sampler_seed = read.number("sampler_seed", 0, UINT64_MAX);
  m.shuffle = read.number("shuffle", 0, 1) == 1;
  m.data = read.text("data");
  if (read.error()) return fail(*read.error());
  return m;
}

}  // namespace ddp::train
