#pragma once
// A runner's kernels under the hardware counters, on one problem session: what `gemmlab profile`,
// `bench --metrics` and `sweep --metrics` report.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "counters/counters.hpp"

namespace gemmlab {

struct KernelProfile {
  std::string runner;  // the runner's name
  std::string kernel;  // the function name of its main kernel (the longest one)
  std::optional<KernelLaunchInfo> launch;
  CounterValues raw;
  nlohmann::ordered_json metrics;  // evaluate() of the requested definitions
  int kernels = 0;                 // kernels one call launches
  int passes = 0;
  double seconds = 0;              // collection wall time
  std::vector<std::string> unavailable;
  nlohmann::ordered_json to_json() const;
};

// Traces one run (launch records), then profiles one more; the runner must have been verified.
// Throws CountersUnavailable when the counters cannot be read.
KernelProfile profile_runner(GemmRunner& r, ProblemSession& s, const std::vector<MetricDef>& defs);

// Profiles a record's runner when it ran the product ("ok") and puts the metrics under
// details.counters, or the one-line reason under details.counters_unavailable. Returns that
// reason ("" when the counters were read).
std::string attach_counters(Record& rec, GemmRunner& r, ProblemSession& s, const std::vector<MetricDef>& defs);

// Seed 000's Table I: one row per metric with ours, the baseline's and their ratio.
void print_comparison(std::ostream& os, const std::vector<MetricDef>& defs, const KernelProfile& ours,
                      const KernelProfile* baseline);
// The same as JSON rows {metric, nvprof, unit, ours, baseline, ratio}.
nlohmann::ordered_json comparison_json(const std::vector<MetricDef>& defs, const KernelProfile& ours,
                                       const KernelProfile* baseline);

}  // namespace gemmlab
