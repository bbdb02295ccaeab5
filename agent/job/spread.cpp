#include "job/spread.hpp"

#include <algorithm>
#include <cmath>

namespace ddp::agent {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stddev(const std::vector<double>& v) {
  double mean = 0, sq = 0;
  for (const double x : v) mean += x / double(v.size());
  for (const double x : v) sq += (x - mean) * (x - mean) / double(v.size());
  return std::sqrt(sq);
}

}  // namespace ddp::agent
