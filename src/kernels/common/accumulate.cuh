// The accumulators of the SIMT families: FP32, as cuBLAS SGEMM adds, or FP64, the FP32-accurate
// fallback of the library's tensor_fp32 mode: the product of two floats is exact in FP64 (24 + 24
// significand bits fit its 53), the sum's error is K·2^-53 of |A||B|, and the one rounding to FP32
// at the store leaves an error at or below cuBLAS SGEMM's on any input.
#pragma once

namespace gl {

// A family's `accum` parameter (0: fp32, 1: fp64) as the accumulators' type.
template <int Which>
struct AccumulatorOf {
  using type = float;
};
template <>
struct AccumulatorOf<1> {
  using type = double;
};
// fp64tile: FP64 accumulators that take one FP32 sum per K tile (ThreadTile's TILE_SUMS).
template <>
struct AccumulatorOf<2> {
  using type = double;
};

// One multiply-add into an accumulator.
__device__ inline float mac(float a, float b, float acc) { return fmaf(a, b, acc); }
__device__ inline double mac(float a, float b, double acc) { return fma(double(a), double(b), acc); }
__device__ inline double mac(double a, float b, double acc) { return fma(a, double(b), acc); }  // a widened once

// Partial sums of a split reduction, in a float workspace. An FP64 one goes out as two planes: the
// sum rounded to float, then what that rounding lost (together 48 of its bits), so the rounding of
// the final sum stays the only one (a float partial would add one rounding per split: the library's
// tensor_fp32 measured 1.08x cuBLAS SGEMM's error with 33 splits of K = 4096, perf-log 38).
template <class Acc>
constexpr int kPartialPlanes = sizeof(Acc) / sizeof(float);

__device__ inline float partial_plane(float x, int) { return x; }
__device__ inline float partial_plane(double x, int plane) {
  const float hi = float(x);
  // An infinite or NaN hi carries the whole sum (Inf - Inf would add a NaN to it).
  return plane == 0 ? hi : isfinite(hi) ? float(x - double(hi)) : 0.0f;
}
// The partial sum at p, its planes `stride` floats apart (written by other blocks: read past L1).
template <class Acc>
__device__ inline Acc partial_at(const float* p, long long stride) {
  Acc v = Acc(__ldcg(p));
  if (kPartialPlanes<Acc> == 2) v += Acc(__ldcg(p + stride));
  return v;
}
template <class Acc>
__device__ inline void store_partial(float* p, long long stride, Acc x) {
#pragma unroll
  for (int plane = 0; plane < kPartialPlanes<Acc>; ++plane) p[plane * stride] = partial_plane(x, plane);
}

}  // namespace gl

#ifndef ACCUM
#define ACCUM 0
#endif
