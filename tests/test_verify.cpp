// The verifier and its tolerance model on host data, where the "kernel" is simulated.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "problem/data.hpp"
#include "verify/verify.hpp"

using namespace gemmlab;

namespace {

// A float result computed the way a kernel would: float accumulation, optionally with the inputs
// rounded to TF32 (10 explicit mantissa bits, round to nearest).
float to_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}

struct Case {
  Problem p;
  std::vector<float> a, b, c0;
  Case(int64_t m, int64_t n, int64_t k, float beta = 0) {
    p.m = m, p.n = n, p.k = k, p.beta = beta;
    p = normalized(p);
    a = random_host(stored_a(p), Distribution::uniform, 1);
    b = random_host(stored_b(p), Distribution::uniform, 2);
    c0 = random_host(stored_c(p), Distribution::uniform, 3);
  }
  std::vector<float> compute(bool tf32) const {
    std::vector<float> c(static_cast<size_t>(stored_c(p).elements()));
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          float x = a[i * p.lda + k], y = b[k * p.ldb + j];
          acc += tf32 ? to_tf32(x) * to_tf32(y) : x * y;
        }
        c[i * p.ldc + j] = p.alpha * acc + (p.beta != 0 ? p.beta * c0[i * p.ldc + j] : 0.0f);
      }
    return c;
  }
  Verifier verifier() const { return Verifier(p, a.data(), b.data(), p.beta != 0 ? c0.data() : nullptr, 5); }
};

}  // namespace

TEST(Tolerance, GrowsWithKAndSeparatesPrecisions) {
  EXPECT_LT(tolerance(Precision::fp32, 64), tolerance(Precision::fp32, 4096));
  EXPECT_GT(tolerance(Precision::tf32, 64), 10 * tolerance(Precision::fp32, 64));
  EXPECT_DOUBLE_EQ(tolerance(Precision::fp32, 1), 0x1p-23 * 6);
}

TEST(Verify, Fp32ComputationPasses) {
  Case t(37, 29, 300, 0.5f);
  auto c = t.compute(false);
  auto v = t.verifier().check(c.data(), Precision::fp32);
  EXPECT_TRUE(v.passed) << v.first_failure;
  EXPECT_EQ(v.method, "fp64-full");
  EXPECT_EQ(v.checked, 37 * 29);
  EXPECT_GT(v.max_err, 0);
  EXPECT_LT(v.rel_norm_err, 1e-6);
}

TEST(Verify, Tf32ComputationFailsFp32ButPassesTf32) {
  Case t(24, 24, 512);
  auto c = t.compute(true);
  auto ver = t.verifier();
  EXPECT_FALSE(ver.check(c.data(), Precision::fp32).passed);
  auto v = ver.check(c.data(), Precision::tf32);
  EXPECT_TRUE(v.passed) << v.first_failure;
  EXPECT_GT(v.rel_norm_err, 1e-5);
}

TEST(Verify, CatchesOneWrongElementNaNInfAndUnwritten) {
  Case t(16, 16, 64);
  auto good = t.compute(false);
  auto ver = t.verifier();
  for (float bad : {NAN, INFINITY, poison_value()}) {
    auto c = good;
    c[5 * t.p.ldc + 7] = bad;
    auto v = ver.check(c.data(), Precision::fp32);
    EXPECT_FALSE(v.passed);
    EXPECT_EQ(v.failures, 1);
    EXPECT_NE(v.first_failure.find("C(5,7)"), std::string::npos) << v.first_failure;
  }
  // A small but real error: one ulp-level change passes, a change of 1e-3 does not.
  auto c = good;
  c[3] = std::nextafter(c[3], 10.0f);
  EXPECT_TRUE(ver.check(c.data(), Precision::fp32).passed);
  c[3] += 1e-3f;
  EXPECT_FALSE(ver.check(c.data(), Precision::fp32).passed);
}

TEST(Verify, CatchesWritesIntoPadding) {
  Problem p;
  p.m = 5, p.n = 4, p.k = 3, p.ldc = 6;
  p = normalized(p);
  auto a = random_host(stored_a(p), Distribution::uniform, 1), b = random_host(stored_b(p), Distribution::uniform, 2);
  auto ref = reference_gemm(p, a.data(), b.data(), nullptr);
  std::vector<float> c(static_cast<size_t>(stored_c(p).elements()), poison_value());
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) c[i * 6 + j] = float(ref[i * 4 + j]);
  Verifier ver(p, a.data(), b.data(), nullptr, 1);
  EXPECT_TRUE(ver.check(c.data(), Precision::fp32).passed);
  c[2 * 6 + 4] = 0.0f;
  auto v = ver.check(c.data(), Precision::fp32);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.first_failure.find("padding"), std::string::npos);
}

TEST(Verify, LargeProblemsSampleAndNeedCublas) {
  Case t(4100, 4100, 200);
  auto ver = t.verifier();
  EXPECT_TRUE(ver.needs_cublas());
  std::vector<float> c(size_t(stored_c(t.p).elements()), 0.0f);
  EXPECT_ANY_THROW(ver.check(c.data(), Precision::fp32));
}
