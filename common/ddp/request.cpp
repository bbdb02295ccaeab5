#include "ddp/request.hpp"

#include <cstring>

#include "ddp/parse.hpp"

namespace ddp {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::Auto:
      return "auto";
    case Mode::Gpu:
      return "gpu";
    case Mode::Cpu:
      return "cpu";
  }
  return "?";
}

Result<Mode> parse_mode(std::string_view text) {
  if (text == "auto") return Mode::Auto;
  if (text == "gpu") return Mode::Gpu;
  if (text == "cpu") return Mode::Cpu;
  return fail("--ddp=" + std::string(text) + " is not a mode; use --ddp, --ddp=auto, --ddp=gpu or --ddp=cpu");
}

namespace {

// sbatch exports a flag as the string "(null)" (Slurm 22.05, src/common/spank.c).
bool absent(const char* value) { return value == nullptr || *value == '\0' || std::strcmp(value, "(null)") == 0; }

Result<std::uint32_t> count(const char* value, std::string_view option, std::uint64_t min, std::uint64_t max) {
  if (absent(value)) return fail("--" + std::string(option) + " needs a value, e.g. --" + std::string(option) + "=2");
  auto n = parse_uint(value, min, max, "--" + std::string(option));
  if (!n) return fail(n.error());
  return std::uint32_t(*n);
}

}  // namespace

Status apply_option(DdpRequest& request, std::string_view option, const char* value) {
  if (option == "ddp") {
    if (!absent(value)) {
      auto mode = parse_mode(value);
      if (!mode) return fail(mode.error());
      request.mode = *mode;
    }
    request.enabled = true;
  } else if (option == "ddp-gpus") {
    auto n = count(value, option, 1, kMaxWorkersPerNode);
    if (!n) return fail(n.error());
    request.gpus = *n;
    request.enabled = true;
  } else if (option == "ddp-procs") {
    auto n = count(value, option, 1, kMaxWorkersPerNode);
    if (!n) return fail(n.error());
    request.procs = *n;
    request.enabled = true;
  } else if (option == "no-ddp") {
    request.opted_out = true;
  } else if (option == "ddp-port") {
    auto n = count(value, option, 1024, 65535);
    if (!n) return fail(n.error());
    request.port = std::uint16_t(*n);
  } else if (option == "ddp-restarts") {
    auto n = count(value, option, 0, kMaxRestarts);
    if (!n) return fail(n.error());
    request.restarts = *n;
  } else if (option == "ddp-verbose") {
    request.verbose = true;
  } else {
    return fail("unknown option --" + std::string(option));
  }
  return Ok{};
}

}  // namespace ddp

namespace ddp {
Status validate(const DdpRequest& request) {
  if (!request.active()) return Ok{};
  if (request.mode == Mode::Cpu && request.gpus)
    return fail("--ddp-gpus asks for GPU workers but --ddp=cpu for CPU workers; drop one of them");
  if (request.mode == Mode::Gpu && request.procs)
    return fail(
        "--ddp-procs sets CPU workers but --ddp=gpu asks for GPU workers; use --ddp=cpu --ddp-procs=N or --ddp-gpus=N");
  if (request.gpus && request.procs)
    return fail(
        "--ddp-gpus and --ddp-procs both given; use --ddp-gpus=N for GPU workers or --ddp-procs=N for CPU workers");
  return Ok{};
}
}  // namespace ddp
