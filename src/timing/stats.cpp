#include <algorithm>
#include <cmath>

#include "timing/stats.hpp"

namespace gemmlab {

double quantile(std::vector<double> xs, double q) {
  if (xs.empty()) return NAN;
  std::sort(xs.begin(), xs.end());
  double h = (double(xs.size()) - 1) * q;
  size_t lo = size_t(std::floor(h));
  size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (h - double(lo)) * (xs[hi] - xs[lo]);
}

Summary summarize(const std::vector<double>& xs) {
  Summary s;
  s.count = int(xs.size());
  if (xs.empty()) return s;
  s.median = quantile(xs, 0.5);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  s.spread = s.median > 0 ? (quantile(xs, 0.75) - quantile(xs, 0.25)) / s.median : 0;
  return s;
}

}  // namespace gemmlab
