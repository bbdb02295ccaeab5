// Small helpers the rules that compare nodes share (straggler.hpp,
// preflight.hpp): the middle and spread of the other nodes' figures, and
// text made safe inside a JSON string for their "event:" lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ddp::agent {

double median(std::vector<double> v);  // of a non-empty list
double stddev(const std::vector<double>& v);  // the population's
// A JSON string's body: quotes, backslashes and control characters escaped.
std::string json_escaped(std::string_view text);

}  // namespace ddp::agent
