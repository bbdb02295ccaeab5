#include "ddp/site_config.hpp"

namespace ddp {

namespace {

Status check_path(std::string_view value, std::string_view where) {
  if (value.empty() || value.front() != '/')
    return fail(std::string(where) + ": '" + std::string(value) + "' must be an absolute path");
  return Ok{};
}

}  // namespace

Result<SiteConfig> parse_site_config(std::string_view text, std::string_view origin) {
  SiteConfig config;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    ++line_no;

    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;

    const std::string where = std::string(origin) + ":" + std::to_string(line_no);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return fail(where + ": expected 'key = value', got '" + std::string(line) + "'");
    const auto key = trim(line.substr(0, eq));
    const auto value = trim(line.substr(eq + 1));

    if (key == "agent") {
      if (auto ok = check_path(value, where + ": agent"); !ok) return fail(ok.error());
      config.agent = std::string(value);
    } else if (key == "port_range") {
      auto range = parse_port_range(value, where + ": port_range");
      if (!range) return fail(range.error());
      config.port_range = *range;
    } else {
      return fail(where + ": unknown key '" + std::string(key) +
                  "'; known keys: agent, port_range (see ddp.conf.example)");
    }
  }
  return config;
}

Result<PluginArgs> parse_plugin_args(const std::vector<std::string_view>& args) {
  PluginArgs parsed;
  for (const auto arg : args) {
    const auto eq = arg.find('=');
    const auto key = arg.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view{} : arg.substr(eq + 1);
    const std::string where = "plugstack.conf argument '" + std::string(arg) + "'";
    if (key == "agent" || key == "config") {
      if (auto ok = check_path(value, where); !ok) return fail(ok.error());
      (key == "agent" ? parsed.agent : parsed.config) = std::string(value);
    } else {
      return fail(where + " is unknown; spank_ddp.so takes agent=PATH and config=PATH");
    }
  }
  return parsed;
}

}  // namespace ddp
