// The values users type: the --ddp* options as Slurm hands them to the plugin
// (also the SDDP_* environment equivalents), the plugstack.conf arguments, and
// the step's command line checked for a second launcher.
//
// Input: lines of "option=value" (or "option" for a flag, delivered as a null
// value); the same lines also serve as SDDP_* variables, plugstack words and argv.
#include <map>
#include <string>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/plan/request.hpp"
#include "ddp/site/site_config.hpp"
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = ddp::fuzz::as_text(data, size);
  ddp::DdpRequest request;
  std::map<std::string, std::string> environment;
  std::vector<std::string_view> words;
  std::vector<std::string> argv;
  ddp::fuzz::for_each_part(text, '\n', [&](std::string_view line) {
    words.push_back(line);
    argv.emplace_back(line);
    const auto eq = line.find('=');
    const std::string option(line.substr(0, eq));
    const std::string value = eq == std::string_view::npos ? std::string() : std::string(line.substr(eq + 1));
    const char* value_ptr = eq == std::string_view::npos ? nullptr : value.c_str();
    if (const auto applied = ddp::apply_option(request, option, value_ptr); applied) {
      // Idempotent: Slurm runs the remote option callbacks twice with the same value.
      const auto once = request;
      FUZZ_CHECK(ddp::apply_option(request, option, value_ptr));
      FUZZ_CHECK(request == once);
    } else {
      FUZZ_CHECK(!applied.error().empty());  // a refusal always says why
    }
    if (eq != std::string_view::npos) environment[option] = value;
    (void)ddp::parse_uint(value, 1, 1024, "--ddp-procs");
    if (const auto range = ddp::parse_port_range(value, "PortRange")) {
      FUZZ_CHECK(range->first >= 1024 && range->first <= range->last);
    }
    (void)ddp::parse_mode(value);
  });
  if (const auto ok = ddp::validate(request); !ok) FUZZ_CHECK(!ok.error().empty());
  const auto lookup = [&](const char* name) -> std::optional<std::string> {
    const auto it = environment.find(name);
    if (it == environment.end()) return std::nullopt;
    return it->second;
  };
  const auto before = request;
  const auto applied = ddp::apply_environment(request, lookup);
  if (!before.active()) FUZZ_CHECK(applied && request == before);  // without --ddp nothing is read
  (void)ddp::retired_variables_warning(lookup);
  (void)ddp::validate(request);
  (void)ddp::parse_plugin_args(words);
  (void)ddp::check_not_a_launcher(argv, size % 2 == 0);
  return 0;
}
