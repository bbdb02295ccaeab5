#include "ddp/base/mode.hpp"

#include <string>

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

}  // namespace ddp
