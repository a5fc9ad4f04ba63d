#pragma once
#include <vector>

namespace gemmlab {

struct Summary {
  int count = 0;
  double median = 0, min = 0, max = 0;
  double spread = 0;  // relative interquartile range: (q3 - q1) / median
};

// Linear interpolation between order statistics (the "type 7" quantile of R and numpy).
double quantile(std::vector<double> xs, double q);
Summary summarize(const std::vector<double>& xs);

}  // namespace gemmlab
