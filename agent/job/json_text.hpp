// Text made safe inside a JSON string, for the verdicts' "event:" lines
// (straggler.hpp, preflight.hpp): quotes, backslashes and control
// characters escaped.
#pragma once

#include <string>
#include <string_view>

namespace ddp::agent {

std::string json_escaped(std::string_view text);

}  // namespace ddp::agent
