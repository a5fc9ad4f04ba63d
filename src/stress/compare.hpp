#pragma once
// Two results of one product compared on the GPU, so that a stress call moves 32 bytes to the host
// instead of two copies of C.
#include <cstdint>

#include <cuda_runtime.h>

#include "gemmlab/problem.hpp"

namespace gemmlab {

struct CompareStats {
  double d2 = 0, r2 = 0;  // sums of squares of the differences and of the reference
  float max_d = 0, max_r = 0;  // largest |difference| and |reference|, over finite pairs
  unsigned long long non_finite = 0;  // elements whose kind (finite, NaN, +Inf, -Inf) differs
};

// Compares the stored matrices `got` and `ref` (same shape and leading dimension) element by
// element, padding excluded, into `device_stats` (device memory), on `stream`.
void compare_on_device(const float* got, const float* ref, const StoredMatrix& c, CompareStats* device_stats,
                       cudaStream_t stream);

}  // namespace gemmlab
