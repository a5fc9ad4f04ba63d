#pragma once
// Counter-based generator shared by the device fill and its host twin: a value depends only on
// (seed, index), so any element can be recomputed anywhere.
#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define GEMMLAB_HD __host__ __device__
#else
#define GEMMLAB_HD
#endif

namespace gemmlab::detail {

GEMMLAB_HD inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The poison: a quiet NaN with every bit set, what a 0xFF byte memset writes; padding and
// unwritten outputs hold exactly this pattern.
GEMMLAB_HD inline float poison_nan() {
#ifdef __CUDA_ARCH__
  return __int_as_float(-1);
#else
  uint32_t bits = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// Odd multiples of 2^-24 in (-1, 1): exact in float and never zero.
GEMMLAB_HD inline float uniform_pm1(uint32_t bits24) { return float(int32_t(2 * bits24 + 1) - (1 << 24)) * 0x1p-24f; }
// (0, 1], multiples of 2^-24.
GEMMLAB_HD inline float uniform_01(uint32_t bits24) { return float(bits24 + 1) * 0x1p-24f; }

// dist: 0 uniform, 1 normal, 2 positive, 3 wide (the order of gemmlab::Distribution).
GEMMLAB_HD inline float random_value(int dist, uint64_t seed, uint64_t index) {
  uint64_t h = splitmix64(seed * 0xd1342543de82ef95ull ^ splitmix64(index));
  uint32_t lo = uint32_t(h) >> 8, hi = uint32_t(h >> 32) >> 8;
  switch (dist) {
    case 1: {
      float v = sqrtf(-2.0f * logf(uniform_01(lo))) * cosf(6.2831853f * uniform_01(hi));
      return v != 0.0f ? v : 0x1p-24f;
    }
    case 2:
      return uniform_01(lo);
    case 3: {
      int e = int(hi % 41u) - 20;
      float mant = 1.0f + uniform_01(lo);
      return ldexpf((h >> 63) ? -mant : mant, e);
    }
    default:
      return uniform_pm1(lo);
  }
}

// Element i of a stored matrix's buffer: element (r, c) gets the value of index r·cols + c, so the
// values do not depend on the leading dimension; padding past the line length is NaN.
GEMMLAB_HD inline float stored_value(int64_t i, int64_t ld, int64_t line_len, bool row_major, int64_t cols, int dist,
                                     uint64_t seed) {
  int64_t line = i / ld, pos = i % ld;
  if (pos >= line_len) return poison_nan();
  int64_t r = row_major ? line : pos, c = row_major ? pos : line;
  return random_value(dist, seed, uint64_t(r * cols + c));
}

}  // namespace gemmlab::detail
