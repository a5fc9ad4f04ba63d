#pragma once
// Seed 004's pipeline: for each k < N, y_k = W · (mean of the M vectors of set k), vectors of
// length L, W L × L. Versions v1 to v4 are single kernels (naive; warp-stride coalesced loads;
// a shared-memory sweep reduction; a two-stage warp-shuffle reduction); v5 is an averaging
// kernel that writes the L × N matrix of means, followed by one SGEMM (cuBLAS, and gemmlab's
// warptiled family). Every version is verified against a float64 CPU reference and timed with
// the harness; the averaging kernel's bandwidth is compared with the measured copy bandwidth.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "timing/ceilings.hpp"
#include "problem/data.hpp"
#include "results/results.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

struct AveragingShape {
  int64_t l = 1024, m = 1024, n = 1024;  // seed 004's sizes: 4 GiB of input
};

// "LxMxN" → shape; throws UsageError.
AveragingShape parse_averaging_shape(const std::string& text);
double averaging_input_bytes(const AveragingShape& s);

// Appends one record per version (and one for the averaging kernel alone) to `records`;
// returns false when a version fails verification.
bool run_averaging(const AveragingShape& s, Distribution d, uint64_t seed, const Ceilings& ceil, DeviceTimer& timer,
                   std::ostream& table, std::vector<Record>& records);

}  // namespace gemmlab
