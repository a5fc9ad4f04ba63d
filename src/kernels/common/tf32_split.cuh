// TF32 rounding and the 3xTF32 operand split, for the tensor-core kernels (device, NVRTC) and the
// host tests (plain C++), which check the host emulation against reference values.
//
// TF32 keeps FP32's sign and 8-bit exponent and the top 10 of its 23 mantissa bits, in the upper 19
// bits of a 32-bit word. cvt.rna.tf32.f32 rounds to nearest with ties away from zero.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TF32_HD __host__ __device__
#else
#define TF32_HD
#include <cstring>
#endif

namespace tf32 {

constexpr unsigned kMask = 0xffffe000u;  // the 19 bits a TF32 value keeps

TF32_HD inline unsigned bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  unsigned u;
  std::memcpy(&u, &x, 4);
  return u;
#endif
}

TF32_HD inline float value(unsigned u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, 4);
  return x;
#endif
}

// Round to nearest, ties away from zero (the hardware's cvt.rna): adding half a TF32 unit to the
// magnitude carries into the kept bits exactly when the dropped ones are at least half; a carry out
// of the mantissa steps the exponent, up to infinity. NaN and infinity pass unchanged.
TF32_HD inline unsigned round_rna(float x) {
#ifdef __CUDA_ARCH__
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
#else
  unsigned u = bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  return (u + 0x1000u) & kMask;
#endif
}

TF32_HD inline unsigned truncate(float x) { return bits(x) & kMask; }

// x ≈ big + small, both TF32. SPLIT 0: big rounded to nearest; SPLIT 1: big truncated. The
// remainder x - big is exact in FP32 (big holds x's leading bits), so only small's rounding loses
// anything: about 2^-22 relative to x. MODE 1 (1xTF32) needs only big, rounded to nearest.
template <int kMode, int kSplit>
TF32_HD inline void split(float x, unsigned& big, unsigned& small) {
  big = (kMode == 1 || kSplit == 0) ? round_rna(x) : truncate(x);
  small = kMode == 3 ? round_rna(x - value(big)) : 0u;
}

#ifdef __CUDA_ARCH__
// d += a·b on the tensor cores: a 16x8 (row-major fragment), b 8x8 (column-major), FP32 accumulate.
__device__ inline void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

}  // namespace tf32
