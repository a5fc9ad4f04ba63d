// The float64 reference against OpenBLAS on random shapes, every layout, transpose and padding.
#include <cblas.h>
#include <gtest/gtest.h>

#include <random>

#include "problem/data.hpp"
#include "verify/verify.hpp"

using namespace gemmlab;

TEST(Reference, MatchesOpenBlasOnEveryLayoutAndTranspose) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dim(1, 70), padding(0, 3);
  int cases = 0;
  for (auto layout : {Layout::row_major, Layout::col_major})
    for (auto ta : {Trans::no, Trans::yes})
      for (auto tb : {Trans::no, Trans::yes})
        for (int rep = 0; rep < 6; ++rep) {
          Problem p;
          p.m = dim(rng), p.n = dim(rng), p.k = dim(rng);
          p.layout = layout, p.trans_a = ta, p.trans_b = tb;
          p.alpha = rep % 2 ? 1.5f : -0.75f;
          p.beta = rep % 3 == 0 ? 0.0f : 0.5f;
          p = normalized(p);
          p.lda += padding(rng), p.ldb += padding(rng), p.ldc += padding(rng);
          p = normalized(p);
          auto a = random_host(stored_a(p), Distribution::uniform, 1 + rep);
          auto b = random_host(stored_b(p), Distribution::uniform, 100 + rep);
          auto c = random_host(stored_c(p), Distribution::uniform, 200 + rep);
          auto ref = reference_gemm(p, a.data(), b.data(), c.data());
          cblas_sgemm(layout == Layout::row_major ? CblasRowMajor : CblasColMajor,
                      ta == Trans::no ? CblasNoTrans : CblasTrans, tb == Trans::no ? CblasNoTrans : CblasTrans, int(p.m),
                      int(p.n), int(p.k), p.alpha, a.data(), int(p.lda), b.data(), int(p.ldb), p.beta, c.data(),
                      int(p.ldc));
          auto cs = c_strides(p);
          for (int64_t i = 0; i < p.m; ++i)
            for (int64_t j = 0; j < p.n; ++j)
              ASSERT_NEAR(c[cs.at(i, j)], ref[i * p.n + j], 1e-5 * (1 + std::sqrt(double(p.k))))
                  << describe(p) << " at " << i << "," << j;
          ++cases;
        }
  EXPECT_EQ(cases, 48);
}

TEST(Reference, ExactOnSmallIntegers) {
  // Row-major 2×2×3 with integers: every product is exact in float64.
  Problem p;
  p.m = 2, p.n = 2, p.k = 3, p.alpha = 2, p.beta = -1;
  p = normalized(p);
  float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12}, c0[] = {1, 1, 1, 1};
  auto ref = reference_gemm(p, a, b, c0);
  EXPECT_EQ(ref, (std::vector<double>{2 * 58 - 1, 2 * 64 - 1, 2 * 139 - 1, 2 * 154 - 1}));
}

TEST(Reference, GemvMatchesOpenBlasSgemv) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> dim(1, 90), padding(0, 3);
  for (auto layout : {Layout::row_major, Layout::col_major})
    for (auto t : {Trans::no, Trans::yes})
      for (int rep = 0; rep < 5; ++rep) {
        Problem p = Problem::gemv(dim(rng), dim(rng), layout, t);
        p.alpha = rep % 2 ? 1.5f : -0.75f;
        p.beta = rep % 3 == 0 ? 0.0f : 0.5f;
        p.lda = stored_a(normalized(p)).min_ld() + padding(rng);
        p = normalized(p);
        auto sa = stored_a(p);
        auto a = random_host(sa, Distribution::uniform, 1 + rep);
        auto x = random_host(stored_b(p), Distribution::uniform, 100 + rep);
        auto y = random_host(stored_c(p), Distribution::uniform, 200 + rep);
        auto ref = reference_gemm(p, a.data(), x.data(), y.data());
        cblas_sgemv(layout == Layout::row_major ? CblasRowMajor : CblasColMajor, t == Trans::no ? CblasNoTrans : CblasTrans,
                    int(sa.rows), int(sa.cols), p.alpha, a.data(), int(p.lda), x.data(), 1, p.beta, y.data(), 1);
        for (int64_t i = 0; i < p.m; ++i)
          ASSERT_NEAR(y[size_t(i)], ref[size_t(i)], 1e-5 * (1 + std::sqrt(double(p.k)))) << describe(p) << " at " << i;
      }
}
