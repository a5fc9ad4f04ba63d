#pragma once
// The commands that explain speed: profile (hardware counters, seed 000's Table I against
// cuBLAS), explain (the analytic model beside the counters and the ablations), ceilings.
#include <string>

#include "bench/bench.hpp"

namespace gemmlab::cli {

// One kernel configuration on one problem, as typed.
struct Target {
  KernelSpec kernel;
  Problem problem;  // normalized
  Distribution dist = Distribution::uniform;
  uint64_t seed = 1;
  std::string command_line;
};

// `gemmlab profile`: counters of the kernel and of cuBLAS (baseline "cublas", or "none").
int run_profile(const Target& t, const std::string& metrics, const std::string& baseline, const std::string& json_path);
// `gemmlab profile --list-metrics`: the counters this GPU offers, then gemmlab's metrics and sets.
int list_metrics();
// `gemmlab explain`: the prediction (no GPU needed); with measure, the kernel's counters, time
// and ablations beside it.
int run_explain(const Target& t, bool measure, const std::string& json_path);
// `gemmlab ceilings`: the measured FFMA rate and DRAM, L2 and shared-memory bandwidths.
int run_ceilings(bool remeasure);

}  // namespace gemmlab::cli
