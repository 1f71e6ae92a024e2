#pragma once
// Order statistics of a sample, as rmbus-load prints them: medians and percentiles by the nearest-rank rule
// (the smallest value with at least p% of the sample at or below it), so every printed figure is a value that
// was measured.

#include <vector>

namespace rmbus::load {

// REQUIRES: 0 < p <= 100. Returns 0 for an empty sample.
double percentile(std::vector<double> sample, double p);
inline double median(std::vector<double> sample) { return percentile(std::move(sample), 50); }

}  // namespace rmbus::load
