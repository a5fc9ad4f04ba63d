#pragma once
// Verification against float64 references, with a tolerance that grows with K.
//
// Error measure: for element (i, j) the error is |C - ref| / s_ij with the magnitude scale
//   s_ij = |alpha| · ||op(A) row i||_2 · ||op(B) column j||_2 + |beta| · |C0_ij|,
// an upper bound (Cauchy–Schwarz) of |alpha| Σ_k |a_ik b_kj| + |beta| |C0_ij|, the quantity that
// rounding-error bounds for a dot product are proportional to. Relative to |ref| instead, an
// element that cancels to nearly zero would fail any kernel. "max_err" is the largest such ratio.
//
// Tolerance (derivation in docs/verification.md):
//   fp32: eps32 · (4 + 2·sqrt(K)), eps32 = 2^-23
//   tf32: 2^-9 + the fp32 tolerance (each product's operands lose 13 mantissa bits)
#include <cstdint>
#include <string>
#include <vector>

#include "gemmlab/problem.hpp"
#include "launch/runner.hpp"

namespace gemmlab {

double tolerance(Precision p, int64_t k);

struct Verdict {
  bool passed = false;
  std::string method;        // "fp64-full" or "fp64-sampled+cublas-all"
  int64_t checked = 0;       // elements compared with float64
  int64_t failures = 0;      // elements over the tolerance, NaN/Inf, or padding written
  double max_err = 0;        // the largest scaled error against float64 (see above)
  double rel_norm_err = 0;   // ||C - ref|| / ||ref|| over the float64-checked elements
  double max_rel_err = 0;    // max |C - ref| / |ref| over them (elements whose ref is not 0)
  // max |C - ref| / (|alpha| (|A||B|)_ij + |beta| |C0_ij|) over them: the tensor_fp32 contract's measure
  // (the exact sum of magnitudes, which s_ij bounds from above).
  double max_abs_err = 0;
  double tolerance = 0;
  double max_dev_cublas = -1;  // largest scaled difference from cuBLAS SGEMM (sampled mode), else -1
  std::string first_failure;   // where and what, for the first failing element
};

// The float64 product of the inputs, for any element.
class Reference {
 public:
  // Host copies of the stored A, B and (when beta != 0) C0 of the problem.
  Reference(const Problem& p, const float* a, const float* b, const float* c0);
  double value(int64_t i, int64_t j) const { return element(i, j).value; }
  // The value and |alpha| Σ_k |a_ik b_kj| + |beta| |C0_ij|, in one pass over the row and column.
  struct Element {
    double value, magnitude;
  };
  Element element(int64_t i, int64_t j) const;
  double scale(int64_t i, int64_t j) const;
  const Problem& problem() const { return p_; }

 private:
  Problem p_;
  std::vector<float> a_rows_;  // op(A), M×K, row-major
  std::vector<float> b_cols_;  // op(B)ᵀ, N×K, row-major
  std::vector<double> a_norm_, b_norm_;
  const float* c0_;
  Strides c_;
};

// The whole float64 product, M×N row-major (for tests and small problems).
std::vector<double> reference_gemm(const Problem& p, const float* a, const float* b, const float* c0);

class Verifier {
 public:
  Verifier(const Problem& p, const float* a, const float* b, const float* c0, uint64_t seed);
  // Large problems are checked fully against cuBLAS SGEMM's output and sampled against float64.
  bool needs_cublas() const { return !full_; }
  void set_cublas_result(std::vector<float> c) { cublas_ = std::move(c); }
  // `c`: host copy of the whole stored C buffer after the run (padding included).
  Verdict check(const float* c, Precision precision) const;

 private:
  Reference ref_;
  bool full_;
  std::vector<std::pair<int64_t, int64_t>> positions_;
  std::vector<double> values_, magnitudes_;
  std::vector<float> cublas_;
};

}  // namespace gemmlab
