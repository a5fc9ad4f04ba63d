// Ozaki scheme II arithmetic (Ozaki, Uchino, Imamura 2025): an FP32 product computed exactly on
// integers, modulo a set of pairwise coprime moduli, one INT8 tensor-core product per modulus.
//   1. Each row i of op(A) is scaled by 2^(qa - e_i) (its 2-norm ||a_i|| < 2^e_i) and rounded to
//      integers; each column j of op(B) by 2^(qb - e_j). Rounded rows have norms below 2^qa + √K/2.
//   2. X = A_int · B_int is an exact integer with |X_ij| <= ||A_int,i|| ||B_int,j|| < M / 2
//      (Cauchy–Schwarz), M the product of the moduli: X is known from its residues X mod m_l (the
//      Chinese remainder theorem). The norm bound gives each side about log2(max/rms) + log2(K)/2
//      more bits than the bound by K · max|a| · max|b|.
//   3. X mod m_l = (A_int mod m_l)(B_int mod m_l) mod m_l: INT8 residues, an INT32 product.
//   4. X / M = sum_l (X mod m_l) · y_l / m_l (mod 1), y_l = (M / m_l)^-1 mod m_l: a sum of
//      fractions, kept as a 64-bit fixed-point integer whose wrap-around is the "mod 1"; read as a
//      signed integer it is 2^64 · X / M; C = X · 2^(e_i + e_j - qa - qb).
// The error is step 1's rounding, and the number of moduli buys the bits that make it small (plus,
// where crt_reduces allows it, step 4's on products added unreduced: within 1/16 of the target).
// Shared by the kernels (NVRTC) and the host (the moduli choice and its tests).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define OZAKI_HD __host__ __device__
#else
#include <cmath>
#define OZAKI_HD
#endif

namespace ozaki {

OZAKI_HD inline float float_of_bits(unsigned u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
#endif
}
OZAKI_HD inline unsigned bits_of_float(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  unsigned u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
#endif
}
// One rounding of a · b + c on both sides (the residue path's exactness arguments count roundings).
OZAKI_HD inline float fma32(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Pairwise coprime moduli, largest first, all at most 256 so that a symmetric residue is an int8:
// 256 = 2^8, 255 = 3·5·17, 253 = 11·23, 247 = 13·19, the rest primes.
constexpr int kMaxModuli = 16;
OZAKI_HD inline int modulus(int l) {
  constexpr int m[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 211, 199, 197, 193, 191};
  return m[l];
}
// Fewer than 2 moduli leave no bits (M / 2 = 128 with one).
constexpr int kMinModuli = 2;
// An INT8 product of K residues (|r| <= 128) stays exact in INT32 while K · 2^14 < 2^31.
constexpr long long kMaxK = (1ll << 17) - 1;

// floor(log2 M), M the product of the first n moduli (a table: the kernels look it up per block;
// a CPU test checks it against the moduli).
OZAKI_HD inline int log2_product(int n) {
  constexpr int bits[kMaxModuli + 1] = {0, 8, 15, 23, 31, 39, 47, 55, 63, 71, 79, 87, 94, 102, 110, 117, 125};
  return bits[n];
}

// The norms of op(A)'s rows and op(B)'s columns after scaling: 2^qa and 2^qb, with one bit of
// M / 2 left for the rounding (each rounded norm stays below 2^q · √2 while √K/2 <= 2^q · 0.41,
// which q >= 10 guarantees for K < 2^17).
struct Bits {
  int a, b;
};
OZAKI_HD inline Bits bits(int n) {
  const int total = log2_product(n) - 2;
  return {total - total / 2, total / 2};
}

// What the data cost, per operand: the largest over its rows (op(B): columns) of rms / geometric
// mean of |x|, both over the row's nonzero elements, times √(K / nonzero). Rounding errors are of
// the scale's size, set by the row's norm (√nonzero · rms), while (|A||B|)_ij >= S · gmean|a| ·
// gmean|b| over the S indices where both are nonzero (the AM-GM inequality, a bound and not an
// estimate: rows whose magnitudes spread over many binades, a few large values among small ones,
// are charged the bits their small elements need; rows with zeros, the smaller common support).
struct Spread {
  float a = 1, b = 1;
};
// One row's, from its nonzero elements' count, sum of squares and sum of log2|x|.
OZAKI_HD inline float row_spread(double squares, double log2s, int nonzero, long long k) {
  return float(sqrt(squares / nonzero) / exp2(log2s / nonzero) * sqrt(double(k) / nonzero));
}

// The scan's sums over one row: its nonzero elements' squares and log2|x|, their count, and whether
// every element is finite.
struct RowSums {
  double squares = 0, logs = 0;
  int nonzero = 0;
  bool finite = true;
};
// A chunk of a row's |x| added to its sums: the chunk's squares and logs summed in FP32, then added
// in float64 (two conversions a chunk instead of two an element: the conversion pipe has an eighth
// of the FP32 rate, and the scan ran ALU-bound on it, perf-log 111). FP32 rounding is monotone, so
// the sum still holds every x² at or above its power of two and the exponent from it still bounds
// every |x|; its relative error (N · 2^-24) is far inside the rounded norms' √2 margin (bits()). A
// chunk whose FP32 sum is outside [2^-100, 2^100] (some |x| from 2^50, where squares overflow from
// 2^64, or all below 2^-50, where they lose bits or vanish) is summed in float64 instead.
// log2|x| only feeds the spread (a geometric mean, to a few bits): on the device the MUFU's
// lg2.approx (absolute error near 2^-22, subnormals kept without ftz), where log2f's polynomial was
// half of the scan's ~50 instructions an element and held it at a quarter of the memory rate
// (perf-log 124). Each element without a branch: a zero adds nothing to the squares.
OZAKI_HD inline float spread_log2(float x) {
#if defined(__CUDA_ARCH__)
  return __log2f(x);
#else
  return log2f(x);
#endif
}
template <int N>
OZAKI_HD inline void add_chunk(RowSums& s, const float (&v)[N]) {
  float squares = 0, logs = 0;
  for (int u = 0; u < N; ++u) {
    s.finite = s.finite && v[u] <= 0x1.fffffep127f;  // |x|: false for Inf and NaN
    const bool nonzero = v[u] > 0;
    logs += nonzero ? spread_log2(v[u]) : 0.0f;
    squares = fma32(v[u], v[u], squares);
    s.nonzero += nonzero;
  }
  s.logs += logs;
  if (squares >= 0x1p-100f && squares <= 0x1p100f) {
    s.squares += squares;
    return;
  }
  for (int u = 0; u < N; ++u)
    if (v[u] > 0) s.squares += double(v[u]) * v[u];
}

// The model of the largest error, relative to (|A||B|)_ij, over a product's elements: A_int's
// rounding errors (uniform, at most half a unit of 2^(e_i - qa), e_i above log2 ||a_i|| by up to
// 1) summed over K against B's column: a standard deviation of 2^(e_i - qa) · √(K/12) · rms_b,
// against (|A||B|)_ij >= K · gmean|a| · gmean|b|; with a tail factor for the largest of many
// elements, and the same for B's rounding. The host emulation's largest errors stay 5x and more
// below it (tests/test_ozaki.cpp); 8 moduli measured 0.13-0.41x cuBLAS SGEMM's error at K = 65536 on
// the H100, where a tail factor of 6 would have asked for 9.
constexpr double kTail = 4.0;
constexpr int kMinBits = 10;
OZAKI_HD inline double predicted_error(int n, Spread s) {
  const Bits q = bits(n);
  if (q.b < kMinBits) return 1.0;
  return kTail * 2.0 / sqrt(12.0) * double(s.a) * double(s.b) * (ldexp(1.0, -q.a) + ldexp(1.0, -q.b));
}

// The contract: no larger than cuBLAS SGEMM's largest error on the same inputs. How large that is
// depends on whether cuBLAS sums each element's K in one FP32 chain (measured on the H100, perf-log
// 87, results/h100/ozaki/regime-38ee746):
// - with few output tiles it splits K over more blocks (at 1024² from K = 4096: its error falls
//   3-4x) and its error falls with K: at 256², 1.3e-7 at K = 16, 4.4e-8 at 1024, 1.9e-8 at 65536
//   for normal inputs (results/h100/ozaki/accuracy-195960f): 2^-22 · K^-1/4 stays at or below each;
// - from 2^22 output elements on (2048², 4096 x 1024: 256 tiles of 128 x 128, two per SM) it keeps
//   one chain per element at every K from 64 to 65536, and its error stays at or above 2.2e-7 for
//   uniform(-1,1) and normal inputs, 6.5e-7 for uniform(0,1), 1.0e-6 for wide-range ones: 2^-22
//   (where 7 moduli measured 0.18-0.31x cuBLAS's error on uniform(-1,1) and normal inputs). Only
//   where both sides fill a 128-wide tile (thinner products may take cuBLAS's GEMV-like kernels,
//   whose reductions run in trees), and up to the longest K measured.
constexpr long long kWholeChainElements = 1ll << 22, kWholeChainMinSide = 128, kWholeChainMinK = 64,
                    kWholeChainMaxK = 65536;
OZAKI_HD inline double target(long long k, long long m, long long n) {
  const bool whole_chain = m * n >= kWholeChainElements && m >= kWholeChainMinSide && n >= kWholeChainMinSide;
  if (whole_chain && k >= kWholeChainMinK && k <= kWholeChainMaxK) return ldexp(1.0, -22);
  return ldexp(1.0, -22) * pow(double(k > 1 ? k : 1), -0.25);
}

// The fewest moduli whose predicted error meets the target for an M x N product at this K;
// kMaxModuli when none does.
OZAKI_HD inline int choose_moduli(Spread s, long long k, long long m, long long n) {
  const double t = target(k, m, n);
  for (int l = kMinModuli; l < kMaxModuli; ++l)
    if (predicted_error(l, s) <= t) return l;
  return kMaxModuli;
}

// Whether the product's CRT steps must reduce P modulo m (crt_accumulate) or may add it whole
// (crt_add: half the integer multiplies of the step, which runs while the tensor cores wait). A
// whole P leaves |P| · |w - 2^64 y / m| <= K · 2^13 units of 2^-64 per modulus (|P| <= K · 2^14):
// in X, n · K · 2^13 · M · 2^-64 at most, which times 2^(e_i + e_j - qa - qb) (M < 2^(qa + qb + 3))
// against the model's (|A||B|)_ij >= 2^(e_i + e_j - 2) / (s_a s_b) is n · K · s_a · s_b · 2^-46: a
// worst case (every residue at ±128 and of one sign), allowed where it stays within
// kCrtShare of the target. It is a bound and not an estimate: random residues give ~√K / K of it.
constexpr double kCrtShare = 1.0 / 16;
OZAKI_HD inline double unreduced_crt_error(int n, Spread s, long long k) {
  return double(n) * double(k) * double(s.a) * double(s.b) * ldexp(1.0, -46);
}
OZAKI_HD inline bool crt_reduces(int moduli, Spread s, long long k, long long m, long long n) {
  return unreduced_crt_error(moduli, s, k) > kCrtShare * target(k, m, n);
}

// Normal inputs' rms / geometric mean of |x| (1 / 0.53): what the model counts on before the data
// are known.
constexpr Spread kNormalSpread{1.89f, 1.89f};

// x · 2^shift rounded to an integer (ties to even): exact in float64 (x has 24 bits), and below
// 2^63 for the kernels' shifts (|x| < 2^e, shift = q - e, q <= 62). Those shifts lie in [-127, 210]
// (e from -148 to 137 for row norms from 2^-149 to 2^137, q from 10), so 2^shift is a normal
// double: on the device the power of two is built from its bits and one conversion rounds (ldexp's
// range handling and a separate rint cost the residue pass instructions per element).
OZAKI_HD inline long long scaled_integer(float x, int shift) {
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(double(x) * __hiloint2double((1023 + shift) << 20, 0));
#else
  return (long long)rint(ldexp(double(x), shift));
#endif
}
// The largest |x · 2^(q - e)| for |x| < 2^e: x has 24 bits, so |x| <= 2^e (1 - 2^-24) and the scaled
// value stays at or below 2^q - 2^(q - 24); with q <= 31 it rounds to an int32 (a 32-bit residue path).
constexpr int kMaxInt32Bits = 31;

// The symmetric residue of v modulo m, in [-m/2, m/2): what one element of A_int contributes to
// plane l. The kernels call it with m a compile-time constant (the division becomes a multiply),
// and with 32-bit integers where the scaled values fit.
template <class Int>
OZAKI_HD inline int symmetric_residue(Int v, int m) {
  int r = int(v % m);  // in (-m, m)
  if (r >= (m + 1) / 2) r -= m;
  if (r < -(m / 2)) r += m;
  return r;
}

// The residues in FP32, for the residue pass: the integer path above takes about ten INT32
// operations per element and modulus, and the INT32 pipe has half the FP32 rate (the pass ran
// ALU-bound at a third of the H200's memory rate, perf-log 111). For X = x · 2^shift exact in FP32
// and |X| < 2^31 (q <= kMaxInt32Bits): v = rint(X) is split as hi · 2^16 + lo, |hi|, |lo| <= 2^15;
// per modulus t = hi · (2^16 mod m) + lo is exact (|t| < 2^22: the table's |2^16 mod m| <= 85), and
// r = t - m · rint(t / m) with the quotient from one fma with 1/m rounded: its error, |t| / m ·
// 2^-24, stays under the 1/(2m) by which t / m misses a half-integer for odd m, so r is the
// symmetric residue itself (m = 256 is v's low byte). Integers are carried as y + kRoundMagic (1.5 ·
// 2^23, for |y| < 2^22): that addition rounds y to an integer (ties to even, as the integer path),
// and the float's low mantissa byte is then y's two's-complement low byte: the plane's int8.
constexpr float kRoundMagic = 12582912.0f;
struct Split16 {
  float hi;        // an integer, |hi| <= 2^15
  float lo_magic;  // lo + kRoundMagic, |lo| <= 2^15
};
OZAKI_HD inline Split16 split16(float x) {
  const float hi = fma32(x, 0x1p-16f, kRoundMagic) - kRoundMagic;
  // x - hi · 2^16 is exact (a multiple of x's unit, no larger than |x|); the addition rounds it.
  return {hi, fma32(-hi, 65536.0f, x) + kRoundMagic};
}
// The symmetric residue of v modulo modulus(l) in the low byte (l a compile-time constant in the kernel).
OZAKI_HD inline unsigned residue_byte(Split16 s, int l) {
  const int m = modulus(l);
  if (m == 256) return bits_of_float(s.lo_magic);
  const float t_magic = fma32(s.hi, float(symmetric_residue(1 << 16, m)), s.lo_magic);
  const float t = t_magic - kRoundMagic;
  const float q = fma32(t, 1.0f / float(m), kRoundMagic) - kRoundMagic;
  return bits_of_float(fma32(-q, float(m), t_magic));  // r + kRoundMagic, exact
}
// Four low bytes as one word, the first lowest.
OZAKI_HD inline unsigned pack_bytes(unsigned b0, unsigned b1, unsigned b2, unsigned b3) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
#else
  return (b0 & 0xffu) | (b1 & 0xffu) << 8 | (b2 & 0xffu) << 16 | (b3 & 0xffu) << 24;
#endif
}

// y_l = (M / m_l)^-1 mod m_l for the first n moduli (extended Euclid).
OZAKI_HD inline int crt_inverse(int l, int n) {
  const int m = modulus(l);
  int rest = 1;
  for (int j = 0; j < n; ++j)
    if (j != l) rest = rest * (modulus(j) % m) % m;
  int r0 = m, r1 = rest, t0 = 0, t1 = 1;
  while (r1 != 0) {
    const int q = r0 / r1, r2 = r0 - q * r1, t2 = t0 - q * t1;
    r0 = r1, r1 = r2, t0 = t1, t1 = t2;
  }
  return ((t0 % m) + m) % m;  // r0 = gcd = 1 for the table above
}

// The CRT step of modulus l in integer arithmetic only (the conversion pipe that float rounding
// and float64 sums need runs at an eighth of the integer multiply rate): the fraction sum is a
// 64-bit fixed-point number F (units of 2^-64, wrapping = mod 1) and each INT32 product P adds
// (P mod m) · w, w = round(2^64 · y / m). P mod m needs no exact division: any U = P - q·m serves
// (U · y / m and (P mod m) · y / m differ by an integer), and its error |U| · |w - 2^64 y / m| <=
// 0.625 m stays below 2^12 units of 2^-64 over 16 moduli: X known to M · 2^-52.
struct CrtStep {
  int minus_m;    // -m: the reduction is one multiply-add
  int magic;      // round(2^32 / m): P · magic / 2^32 is P / m within 1/4 for |P| < 2^31
  int w_lo;       // w = w_hi · 2^32 + w_lo, w_lo signed (a signed wide multiply takes it)
  unsigned w_hi;
};

OZAKI_HD inline CrtStep crt_step(int l, int n) {
  const unsigned long long m = (unsigned long long)modulus(l), y = (unsigned long long)crt_inverse(l, n);
  // 2^64 · y / m by long division in two 32-bit digits (y < m < 2^9), rounded to nearest.
  const unsigned long long q1 = (y << 32) / m, r1 = (y << 32) % m;
  const unsigned long long q0 = (r1 << 32) / m, r0 = (r1 << 32) % m;
  const unsigned long long w = (q1 << 32) + q0 + (2 * r0 >= m ? 1 : 0);
  const unsigned lo = unsigned(w & 0xffffffffu);
  CrtStep s;
  s.minus_m = -int(m);
  s.magic = int(((1ull << 32) + m / 2) / m);
  s.w_lo = int(lo);  // two's complement: lo - 2^32 when lo >= 2^31, carried by w_hi + 1
  s.w_hi = unsigned(w >> 32) + (lo >= 0x80000000u ? 1u : 0u);
  return s;
}

// F += U · w (mod 2^64) for any U: a wide multiply-add, and a multiply-add on the upper word.
OZAKI_HD inline unsigned long long crt_add(unsigned long long f, int u, const CrtStep& s) {
  f += (unsigned long long)((long long)u * s.w_lo);
  // u · w_hi lands on the upper word alone: one multiply-add there (a 64-bit add of it cost an
  // extra add for a carry that is always 0).
  const unsigned upper = unsigned(f >> 32) + unsigned(u) * s.w_hi;
  return (unsigned long long)upper << 32 | unsigned(f);
}
// A value congruent to P modulo m, |U| <= 1.25 m + 1: a high multiply and a multiply-add.
OZAKI_HD inline int reduce_product(int p, const CrtStep& s) {
#if defined(__CUDA_ARCH__)
  const int q = __mulhi(p, s.magic);
#else
  const int q = int(((long long)p * s.magic) >> 32);
#endif
  return p + q * s.minus_m;
}
// F += (P mod m) · w (mod 2^64).
OZAKI_HD inline unsigned long long crt_accumulate(unsigned long long f, int p, const CrtStep& s) {
  return crt_add(f, reduce_product(p, s), s);
}

// C from the fixed-point sum: X = F · M · 2^-64 (F read as signed: |X| < M / 2), times
// 2^(e_i + e_j - qa - qb); scale = M · 2^-(qa + qb), e = e_i + e_j (within ±300 for float inputs,
// so every factor is an ordinary float64 and only the final rounding to float counts).
OZAKI_HD inline double rebuild(unsigned long long f, double scale, int e) {
#if defined(__CUDA_ARCH__)
  const double pow2 = __hiloint2double((e - 64 + 1023) << 20, 0);  // ldexp's range checks cost more than the epilogue
#else
  const double pow2 = ldexp(1.0, e - 64);
#endif
  return double((long long)f) * scale * pow2;
}

// The pre-passes' view of op(A) (M x K) and op(B)ᵀ (N x K): element (r, c) at x[r·sr + c·sk]; what
// they write: the residue planes [plane][rows][kp] (int8, rows of kp >= K bytes, zero past K) and
// each row's exponent e (its 2-norm < 2^e; kNonFinite for a row holding Inf or NaN).
struct PassOperand {
  const float* x;
  long long sr, sk, rows;
  signed char* planes;
  int* exponent;
};
struct Info;
struct PassArgs {
  PassOperand op[2];
  long long k, kp;
  Info* info;
};
constexpr int kNonFinite = 0x7fffffff;
// The pre-passes' blocks: the scan takes kScanRows rows over all of K, the residue pass 32 rows by
// kResidueColumns columns (the kernels and the launcher's grids).
constexpr int kScanRows = 8, kResidueColumns = 128;

// What the scan leaves for the residues and the product (GemmArgs::extra). The header's five
// words are zeroed before the scan: spread, the max over op(A)'s rows of rms / gmean (Spread), then
// op(B)'s (float bits: positive floats order like their bits, so atomicMax on them works); the
// scan blocks done, so that the last one chooses the moduli (and whether the CRT steps reduce)
// once for the call. Then op(A)'s row exponents (M), then op(B)'s (N).
struct Info {
  unsigned spread[2];
  unsigned done;
  int moduli;
  int reduce;  // crt_reduces: the product's CRT steps reduce P (crt_accumulate), else crt_add it whole
  int exponent[1];
};
constexpr int kInfoHeaderWords = 5;

// The pre-passes' statistics (a zero: an operand of zero rows).
OZAKI_HD inline Spread spread_of(const unsigned* spread) {
  Spread s;
  if (spread[0]) s.a = float_of_bits(spread[0]);
  if (spread[1]) s.b = float_of_bits(spread[1]);
  return s;
}

}  // namespace ozaki
