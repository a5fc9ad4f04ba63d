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

// One multiply-add into an accumulator.
__device__ inline float mac(float a, float b, float acc) { return fmaf(a, b, acc); }
__device__ inline double mac(float a, float b, double acc) { return fma(double(a), double(b), acc); }

}  // namespace gl

#ifndef ACCUM
#define ACCUM 0
#endif
