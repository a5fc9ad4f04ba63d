#pragma once
// A GEMM problem as a column-major BLAS call (cuBLAS and the libraries shaped
// like it): a row-major C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ,
// the same call with the operands swapped.
#include <cublas_v2.h>

#include "gemmlab/problem.hpp"
#include "launch/runner.hpp"

namespace gemmlab {

struct ColumnMajorCall {
  cublasOperation_t ta, tb;
  long long m, n, k;
  const float *a, *b;
  long long lda, ldb, ldc;
};

inline ColumnMajorCall column_major(const Problem &p, const Operands &o) {
  const bool row = p.layout == Layout::row_major;
  auto op = [](Trans t) { return t == Trans::no ? CUBLAS_OP_N : CUBLAS_OP_T; };
  return {op(row ? p.trans_b : p.trans_a),
          op(row ? p.trans_a : p.trans_b),
          row ? p.n : p.m,
          row ? p.m : p.n,
          p.k,
          row ? o.b : o.a,
          row ? o.a : o.b,
          row ? p.ldb : p.lda,
          row ? p.lda : p.ldb,
          p.ldc};
}

}  // namespace gemmlab
