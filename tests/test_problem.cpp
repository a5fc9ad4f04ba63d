#include <gtest/gtest.h>

#include <cmath>

#include "gemmlab/error.hpp"
#include "gemmlab/problem.hpp"

using namespace gemmlab;

TEST(Problem, TightLeadingDimensionsPerLayoutAndTranspose) {
  Problem p;
  p.m = 3, p.n = 5, p.k = 7;
  auto q = normalized(p);
  EXPECT_EQ(q.lda, 7);  // row-major A is M×K
  EXPECT_EQ(q.ldb, 5);
  EXPECT_EQ(q.ldc, 5);
  p.trans_a = p.trans_b = Trans::yes;
  q = normalized(p);
  EXPECT_EQ(q.lda, 3);  // stored K×M
  EXPECT_EQ(q.ldb, 7);  // stored N×K
  p.layout = Layout::col_major;
  q = normalized(p);
  EXPECT_EQ(q.lda, 7);  // column-major K×M: column length K
  EXPECT_EQ(q.ldb, 5);
  EXPECT_EQ(q.ldc, 3);
}

TEST(Problem, StridesAddressTheSameElementAsTheStoredMatrix) {
  for (auto layout : {Layout::row_major, Layout::col_major})
    for (auto ta : {Trans::no, Trans::yes})
      for (auto tb : {Trans::no, Trans::yes}) {
        Problem p;
        p.m = 4, p.n = 6, p.k = 5, p.layout = layout, p.trans_a = ta, p.trans_b = tb;
        p.lda = p.ldb = p.ldc = 9;
        auto sa = op_a_strides(p), sb = op_b_strides(p);
        auto A = stored_a(p), B = stored_b(p);
        for (int64_t i = 0; i < p.m; ++i)
          for (int64_t k = 0; k < p.k; ++k)
            EXPECT_EQ(sa.at(i, k), ta == Trans::no ? A.at(i, k) : A.at(k, i));
        for (int64_t k = 0; k < p.k; ++k)
          for (int64_t j = 0; j < p.n; ++j)
            EXPECT_EQ(sb.at(k, j), tb == Trans::no ? B.at(k, j) : B.at(j, k));
      }
}

namespace {
// normalized()'s one-line refusal, or "accepted".
std::string message(const Problem& p) {
  try {
    normalized(p);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST(Problem, RejectsBadSizesWithOneLine) {
  EXPECT_EQ(message(Problem::square(0)), "M must be at least 1, got 0");
  Problem p = Problem::square(8);
  p.k = -3;
  EXPECT_EQ(message(p), "K must be at least 1, got -3");
  p = Problem::square(8);
  p.lda = 7;
  EXPECT_NE(message(p).find("leading dimension of A is 7 but must be at least 8"), std::string::npos);
  p = Problem::square(int64_t(1) << 31);
  EXPECT_NE(message(p).find("exceeds 2^31-1"), std::string::npos);
  p = Problem::square(int64_t(1) << 30);
  p.lda = p.ldb = p.ldc = (int64_t(1) << 31) - 1;
  EXPECT_NE(message(p).find("64-bit byte count"), std::string::npos) << message(p);
  p = Problem::square(4);
  p.alpha = INFINITY;
  EXPECT_EQ(message(p), "alpha must be finite");
  for (auto s : {"", "x", "rowmajor"}) EXPECT_THROW(parse_layout(s), UsageError);
  EXPECT_THROW(parse_trans("q"), UsageError);
}

TEST(Problem, GemvIsAOneColumnGemm) {
  // BLAS's M × N matrix A: y has M elements without a transpose, N with one.
  Problem p = normalized(Problem::gemv(300, 200, Layout::row_major, Trans::no));
  EXPECT_EQ(p.op, Op::gemv);
  EXPECT_EQ(p.m, 300);
  EXPECT_EQ(p.k, 200);
  EXPECT_EQ(p.n, 1);
  EXPECT_EQ(p.lda, 200);
  EXPECT_EQ(describe(p), "gemv 300x200 row N");
  EXPECT_EQ(op_a_strides(p).col, 1);  // rows contiguous: dot products
  Problem t = normalized(Problem::gemv(300, 200, Layout::row_major, Trans::yes));
  EXPECT_EQ(t.m, 200);
  EXPECT_EQ(t.k, 300);
  EXPECT_EQ(op_a_strides(t).row, 1);  // outputs contiguous: sums of columns
  EXPECT_EQ(describe(t), "gemv 300x200 row T");
  Problem c = normalized(Problem::gemv(300, 200, Layout::col_major, Trans::no));
  EXPECT_EQ(c.lda, 300);
  EXPECT_EQ(op_a_strides(c).row, 1);
  EXPECT_DOUBLE_EQ(min_bytes(p), 4.0 * (300 * 200 + 200 + 300));
  EXPECT_DOUBLE_EQ(flops(p), 2.0 * 300 * 200);
  EXPECT_EQ(parse_op("gemv"), Op::gemv);
  EXPECT_THROW(parse_op("gemvv"), UsageError);
}

TEST(Problem, GemvRefusesNonUnitIncrementsAndTransposedX) {
  Problem p = Problem::gemv(10, 20, Layout::row_major, Trans::no);
  p.ldb = 2;  // the stride between x's elements in row-major storage: incx
  EXPECT_EQ(message(p), "GEMV supports unit increments of x and y only (incx = incy = 1)");
  p = Problem::gemv(10, 20, Layout::row_major, Trans::no);
  p.n = 3;
  EXPECT_EQ(message(p), "a GEMV problem has N = 1 (y = op(A)·x), got N = 3");
  p = Problem::gemv(10, 20, Layout::col_major, Trans::no);
  p.trans_b = Trans::yes;
  EXPECT_EQ(message(p), "a GEMV problem has no transpose of x");
  p = Problem::gemv(10, 20, Layout::col_major, Trans::no);
  p.lda = 11;  // column-major 10×20 needs at least 10
  EXPECT_EQ(message(p), "accepted");
}

TEST(Problem, BytesAndFlops) {
  Problem p = normalized(Problem::square(10));
  EXPECT_DOUBLE_EQ(flops(p), 2000.0);
  EXPECT_DOUBLE_EQ(min_bytes(p), 4.0 * 300);
  p.beta = 1;
  EXPECT_DOUBLE_EQ(min_bytes(p), 4.0 * 400);
  p.ldc = 12;
  EXPECT_EQ(stored_c(p).elements(), 9 * 12 + 10);  // the last row carries no padding
  EXPECT_EQ(describe(p), "10x10x10 row NN");
}

TEST(Problem, OfAParsedShape) {
  auto g = problem_of_shape(Op::gemm, parse_shape("4x5x6", Op::gemm), Layout::col_major, Trans::yes, Trans::no);
  EXPECT_EQ(g.op, Op::gemm);
  EXPECT_EQ(g.m, 4);
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 6);
  EXPECT_EQ(g.layout, Layout::col_major);
  EXPECT_EQ(g.trans_a, Trans::yes);
  // gemv: the stored A's rows x columns; y = A^T x has M = columns.
  auto v = problem_of_shape(Op::gemv, parse_shape("7x9", Op::gemv), Layout::row_major, Trans::yes, Trans::no);
  EXPECT_EQ(v.op, Op::gemv);
  EXPECT_EQ(v.m, 9);
  EXPECT_EQ(v.k, 7);
  EXPECT_EQ(v.n, 1);
}
