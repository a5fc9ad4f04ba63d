#pragma once
// The accuracy study (issue 7): ||C - ref|| / ||ref|| and the largest element-wise relative error
// against float64, over K and input distributions, for every kernel in the same run.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace gemmlab {

struct AccuracyOptions {
  std::vector<KernelSpec> kernels;  // cuBLAS SGEMM is always among them (the row every other is compared with)
  std::vector<int64_t> ks = {64, 256, 1024, 4096, 16384};
  std::vector<Distribution> dists = {Distribution::uniform, Distribution::normal, Distribution::positive,
                                     Distribution::wide};
  int64_t mn = 256;  // M = N: every element checked against float64 up to 2^31 multiply-adds, else 32 x 32 sampled
  int64_t m = 0, n = 0;  // M and N where set (a vector product: M or N = 1), else mn
  uint64_t seed = 1;
  std::string command_line;
};

// One row per (distribution, K, kernel): "rel_fro", "max_rel", "fro_x_cublas" (rel_fro / cuBLAS
// SGEMM's), the kernel's precision and whether it passed its own tolerance.
nlohmann::ordered_json run_accuracy(const AccuracyOptions& o, std::ostream& table);

}  // namespace gemmlab
