// The middle and spread of the other nodes' figures, for the rules that
// compare nodes (straggler.hpp, preflight.hpp).
#pragma once

#include <vector>

namespace ddp::agent {

double median(std::vector<double> v);         // of a non-empty list
double stddev(const std::vector<double>& v);  // the population's

}  // namespace ddp::agent
