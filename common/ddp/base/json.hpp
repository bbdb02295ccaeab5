// JSON through nlohmann-json (Debian's nlohmann-json3-dev, header-only), for
// every JSON line slurm-ddp writes or reads: the verdicts' "event:" lines
// (straggler.hpp, preflight.hpp), ddp-train's --metrics records, scontrol's
// --json answer (slurm/job_fields.hpp). nlohmann throws; these never do.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ddp {

// An object whose keys keep the order they were added in: the documented
// lines name "event" first.
using JsonObject = nlohmann::ordered_json;

// One line, no spaces ({"event":"epoch","epoch":1}); bytes that are not
// UTF-8 (a host name, a worker's message) become U+FFFD instead of throwing.
inline std::string json_line(const JsonObject& object) {
  return object.dump(-1, ' ', false, JsonObject::error_handler_t::replace);
}

// `text` parsed, or nullopt when it is not JSON.
inline std::optional<nlohmann::json> json_parsed(std::string_view text) {
  auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

}  // namespace ddp
