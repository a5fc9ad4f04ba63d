// Ozaki scheme II arithmetic on the host (ozaki_math.cuh, shared with the kernels): the moduli, the
// bit budget, residues, the CRT reconstruction, the moduli choice against its error model, and
// the family's constraints.
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gemmlab/error.hpp"
#include "kernels/common/ozaki_math.cuh"
#include "kernels/common/quad_columns.cuh"
#include "kernels/family.hpp"
#include "launch/launcher.hpp"

namespace gemmlab {
namespace {

TEST(Ozaki, ModuliArePairwiseCoprimeAndTheLog2TableMatchesThem) {
  double log2m = 0;
  for (int l = 0; l < ozaki::kMaxModuli; ++l) {
    EXPECT_LE(ozaki::modulus(l), 256);
    for (int j = 0; j < l; ++j) EXPECT_EQ(std::gcd(ozaki::modulus(l), ozaki::modulus(j)), 1) << l << " " << j;
    log2m += std::log2(double(ozaki::modulus(l)));
    EXPECT_EQ(ozaki::log2_product(l + 1), int(std::floor(log2m))) << l + 1;
  }
}

// Rounded rows have norms below 2^q · √2, and their product must stay below M / 2.
TEST(Ozaki, TheBitBudgetKeepsEveryProductBelowHalfM) {
  for (int n = ozaki::kMinModuli; n <= ozaki::kMaxModuli; ++n) {
    const auto q = ozaki::bits(n);
    double log2m = 0;
    for (int l = 0; l < n; ++l) log2m += std::log2(double(ozaki::modulus(l)));
    EXPECT_LT(q.a + 0.5 + q.b + 0.5, log2m - 1) << n;
    EXPECT_LE(std::abs(q.a - q.b), 1);
    // The rounding slack √K/2 fits in the √2 margin from kMinBits bits on, for every K the family takes.
    if (q.b >= ozaki::kMinBits)
      EXPECT_LE(std::sqrt(double(ozaki::kMaxK)) / 2, std::ldexp(std::sqrt(2.0) - 1, q.b)) << n;
  }
}

TEST(Ozaki, ScaledIntegersAreExactAndResiduesSymmetric) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int t = 0; t < 2000; ++t) {
    const float x = u(rng) * std::ldexp(1.0f, int(rng() % 60) - 30);
    const int shift = int(rng() % 90) - 20;
    const long double v = std::rintl(std::ldexp((long double)x, shift));
    if (std::fabs(v) >= 0x1p62L) continue;  // the kernels' integers stay below 2^62 (bits(16).a = 62)
    const long long got = ozaki::scaled_integer(x, shift);
    ASSERT_EQ((long double)got, v) << x << " " << shift;
    for (int l = 0; l < ozaki::kMaxModuli; ++l) {
      const int m = ozaki::modulus(l), r = ozaki::symmetric_residue(got, m);
      ASSERT_GE(r, -(m / 2));
      ASSERT_LT(r, (m + 1) / 2 + (m % 2));
      ASSERT_LE(r, 127);
      ASSERT_GE(r, -128);
      ASSERT_EQ(((__int128)got - r) % m, 0) << x << " " << shift << " m=" << m;
      if (std::fabs(v) < 0x1p31L) ASSERT_EQ(ozaki::symmetric_residue(int(got), m), r);  // the 32-bit path
    }
  }
  // The 32-bit residue path up to q = kMaxInt32Bits: the largest float below 2^e scales to 2^31 - 2^7.
  for (int e : {-100, -3, 0, 20, 120}) {
    const float below = std::nextafter(std::ldexp(1.0f, e), 0.0f);
    const long long v = ozaki::scaled_integer(below, ozaki::kMaxInt32Bits - e);
    EXPECT_EQ(v, (1ll << 31) - 128) << e;
    EXPECT_EQ(ozaki::scaled_integer(-below, ozaki::kMaxInt32Bits - e), -v);
  }
  EXPECT_EQ(ozaki::bits(8).a, ozaki::kMaxInt32Bits);  // normal inputs' 8 moduli: op(A) on the 32-bit path
  // Zeros and subnormals: a subnormal scaled up is an ordinary integer; zero stays zero.
  EXPECT_EQ(ozaki::scaled_integer(0.0f, 40), 0);
  EXPECT_EQ(ozaki::scaled_integer(std::ldexp(3.0f, -148), 160), 3ll << 12);
}

// The residue pass's FP32 path gives the integer path's planes byte for byte, for every modulus, on
// scaled values from 0 to the largest below 2^31 (q = kMaxInt32Bits), ties, subnormals and both signs.
TEST(Ozaki, Fp32ResiduesAreTheIntegerResidues) {
  std::mt19937 rng(11);
  std::vector<float> xs = {0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -2.5f, 32767.5f, 32768.0f, 65535.5f, 98304.0f,
                           std::ldexp(1.0f, -149), -std::ldexp(3.0f, -130), std::ldexp(1.0f, 30),
                           std::nextafter(std::ldexp(1.0f, 31), 0.0f), -std::nextafter(std::ldexp(1.0f, 31), 0.0f)};
  for (int t = 0; t < 200000; ++t) {
    // Magnitudes across 2^-3 .. 2^31 (a row's small elements scale to fractions), half of them
    // on a multiple of 1/2 (ties for the rounding).
    float x = std::ldexp(float(rng() >> 8) / float(1 << 24), int(rng() % 35) - 3);
    if (t % 2) x = std::ldexp(std::round(std::ldexp(x, 1)), -1);
    xs.push_back(rng() % 2 ? -x : x);
  }
  for (float x : xs) {
    ASSERT_LT(std::fabs(x), 0x1p31f);
    const long long v = std::llrint(x);  // ties to even, as __double2ll_rn
    const auto s = ozaki::split16(x);
    ASSERT_LE(std::fabs(s.hi), 32768.0f) << x;
    ASSERT_LE(std::fabs(s.lo_magic - ozaki::kRoundMagic), 32768.0f) << x;
    for (int l = 0; l < ozaki::kMaxModuli; ++l) {
      const int m = ozaki::modulus(l);
      ASSERT_EQ(ozaki::residue_byte(s, l) & 0xffu, unsigned(ozaki::symmetric_residue(int(v), m)) & 0xffu)
          << x << " m=" << m;
    }
  }
  // The exactness bound: |2^16 mod m| · 2^15 + 2^15 < 2^22 for every modulus.
  for (int l = 0; l < ozaki::kMaxModuli; ++l)
    EXPECT_LT((std::abs(ozaki::symmetric_residue(1 << 16, ozaki::modulus(l))) + 1) << 15, 1 << 22) << l;
  EXPECT_EQ(ozaki::pack_bytes(0x101u, 0xfe02u, 0x3u, 0xffffff84u), 0x84030201u);  // low bytes only
}

// The scan's chunked sums: the float64 sums of every element within FP32's rounding of a chunk,
// the exponent from them bounding every |x| (the residue pass's int32 range depends on it), and
// chunks with huge or tiny elements, zeros, Inf and NaN as the float64 sums have them.
TEST(Ozaki, ScanChunksSumLikeFloat64AndBoundEveryElement) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int t = 0; t < 20000; ++t) {
    const int base = int(rng() % 220) - 140;  // rows from 2^-140 to 2^120: both fallbacks
    std::vector<float> row(8 * (1 + rng() % 8));
    for (auto& x : row) x = rng() % 7 == 0 ? 0.0f : std::ldexp(u(rng), base + int(rng() % 40));
    if (t % 3 == 0) row[rng() % row.size()] = std::ldexp(1.0f, base + 20);  // a power of two: the bound's edge
    ozaki::RowSums s;
    double squares = 0, logs = 0;
    int nonzero = 0;
    for (size_t c = 0; c < row.size(); c += 8) {
      float v[8];
      std::copy(row.begin() + c, row.begin() + c + 8, v);
      ozaki::add_chunk(s, v);
    }
    for (float x : row)
      if (x > 0) squares += double(x) * x, logs += std::log2(double(x)), ++nonzero;
    ASSERT_TRUE(s.finite);
    ASSERT_EQ(s.nonzero, nonzero);
    if (nonzero == 0) continue;
    ASSERT_NEAR(s.squares, squares, squares * 1e-6) << base;
    ASSERT_NEAR(s.logs, logs, 1e-3 * nonzero);
    int e = 0;
    std::frexp(std::sqrt(s.squares), &e);
    for (float x : row) ASSERT_LT(x, std::ldexp(1.0, e)) << base;
  }
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    ozaki::RowSums s;
    float v[8] = {1.0f, bad, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    ozaki::add_chunk(s, v);
    EXPECT_FALSE(s.finite);
  }
}

// A random exact product rebuilt from its residues: the INT32 products per modulus (anywhere in
// INT32's range: the kernel's sums over K are not reduced), their CRT steps into the fixed-point
// sum, as the kernel does them.
TEST(Ozaki, TheCrtRebuildsExactProductsFromTheirResidues) {
  std::mt19937_64 rng(7);
  for (int n : {2, 5, 7, 8, 10, 16}) {
    const auto q = ozaki::bits(n);
    long double mprod = 1;
    for (int l = 0; l < n; ++l) mprod *= ozaki::modulus(l);
    for (int trial = 0; trial < 400; ++trial) {
      const int k = 1 + int(rng() % 64);
      // Integers with norms below 2^q (each below 2^q / √K), as the scan's scaling makes them; every
      // tenth trial at the bound's edge (|X| near M / 2).
      std::vector<long double> a(k), b(k);
      std::uniform_real_distribution<double> u(-1, 1);
      long double x = 0;
      for (int i = 0; i < k; ++i) {
        const double edge = trial % 10 ? u(rng) : (i % 2 ? 1.0 : -1.0) * (0.999 + 0.001 * u(rng));
        a[i] = std::rintl(edge * std::ldexp(1.0, q.a) / std::sqrt(double(k)));
        b[i] = std::rintl((trial % 10 ? u(rng) : edge) * std::ldexp(1.0, q.b) / std::sqrt(double(k)));
        x += a[i] * b[i];
      }
      unsigned long long fraction = 0, whole = 0;  // P reduced (crt_accumulate), P added whole (crt_add)
      long double whole_bound = std::ldexp(mprod, -50);
      for (int l = 0; l < n; ++l) {
        const int m = ozaki::modulus(l);
        long long p = 0;
        for (int i = 0; i < k; ++i)
          p += ozaki::symmetric_residue((long long)a[i], m) * ozaki::symmetric_residue((long long)b[i], m);
        // Any INT32 value congruent to the product: the step's quotient is approximate.
        const long long room = ((1ll << 31) - 1 - std::llabs(p)) / m;
        p += m * (std::uniform_int_distribution<long long>(-room, room)(rng));
        ASSERT_LE(std::llabs(p), (1ll << 31) - 1);
        fraction = ozaki::crt_accumulate(fraction, int(p), ozaki::crt_step(l, n));
        whole = ozaki::crt_add(whole, int(p), ozaki::crt_step(l, n));
        whole_bound += mprod * std::ldexp((long double)(std::llabs(p) / 2 + 1), -64);  // |P| · |w - 2^64 y / m|
      }
      const long double rebuilt = (long double)ozaki::rebuild(fraction, 1.0, 0) * mprod;  // X / M, times M
      ASSERT_LE(std::fabs(rebuilt - x), std::ldexp(mprod, -50)) << "n=" << n << " k=" << k;
      const long double rebuilt_whole = (long double)ozaki::rebuild(whole, 1.0, 0) * mprod;
      ASSERT_LE(std::fabs(rebuilt_whole - x), whole_bound) << "n=" << n << " k=" << k;
    }
  }
  // The step's extremes: the largest INT32 products of either sign, every modulus.
  for (int n : {2, 8, 16})
    for (int l = 0; l < n; ++l)
      for (long long p : {(1ll << 31) - 1, -(1ll << 31), 0ll, 1ll, -1ll}) {
        const int m = ozaki::modulus(l);
        const long long r = ((p % m) + m) % m;  // the exact residue
        const auto step = ozaki::crt_step(l, n);
        const long double want = std::fmod((long double)r * ozaki::crt_inverse(l, n) / m, 1.0L);
        long double off = (long double)ozaki::crt_accumulate(0, int(p), step) * std::ldexp(1.0L, -64) - want;
        off -= std::rintl(off);  // mod 1
        EXPECT_LE(std::fabs(double(off)), std::ldexp(1.0, -54)) << n << " " << l << " " << p;
      }
}

// Whole products (crt_add) only where their worst case stays within kCrtShare of the contract: on
// normal inputs, the large products and short K; reduced for the small products at long K, and for
// every product once the spread is large.
TEST(Ozaki, CrtStepsReduceWhereAWholeProductCouldCostTheContract) {
  const ozaki::Spread normal = ozaki::kNormalSpread;
  EXPECT_FALSE(ozaki::crt_reduces(7, normal, 8192, 8192, 8192));
  EXPECT_FALSE(ozaki::crt_reduces(8, normal, 1024, 1024, 1024));
  EXPECT_TRUE(ozaki::crt_reduces(8, normal, 65536, 256, 256));
  EXPECT_TRUE(ozaki::crt_reduces(7, {1000, 1000}, 1024, 8192, 8192));
  for (long long mn : {64ll, 1024ll, 2048ll, 16384ll})
    for (int moduli = ozaki::kMinModuli; moduli <= ozaki::kMaxModuli; ++moduli)
      for (float spread : {1.0f, 1.89f, 30.0f})
        for (long long k = 1; k <= ozaki::kMaxK; k *= 2) {
          const ozaki::Spread s{spread, spread};
          const bool reduces = ozaki::crt_reduces(moduli, s, k, mn, mn);
          if (!reduces)
            EXPECT_LE(ozaki::unreduced_crt_error(moduli, s, k), ozaki::kCrtShare * ozaki::target(k, mn, mn));
          // Longer K (where the target does not grow), more moduli or a larger spread never drop
          // the reduction.
          if (reduces) {
            if (ozaki::target(2 * k, mn, mn) <= ozaki::target(k, mn, mn))
              EXPECT_TRUE(ozaki::crt_reduces(moduli, s, 2 * k, mn, mn)) << k << " " << mn;
            EXPECT_TRUE(ozaki::crt_reduces(moduli + 1, s, k, mn, mn)) << k << " " << mn;
            EXPECT_TRUE(ozaki::crt_reduces(moduli, {2 * spread, spread}, k, mn, mn)) << k << " " << mn;
          }
        }
}

TEST(Ozaki, CrtInversesInvertTheCofactors) {
  for (int n = 2; n <= ozaki::kMaxModuli; ++n)
    for (int l = 0; l < n; ++l) {
      const int m = ozaki::modulus(l);
      long long rest = 1;
      for (int j = 0; j < n; ++j)
        if (j != l) rest = rest * ozaki::modulus(j) % m;
      EXPECT_EQ(rest * ozaki::crt_inverse(l, n) % m, 1) << n << " " << l;
    }
}

TEST(Ozaki, TheModuliChoiceIsTheFewestThatMeetTheModel) {
  for (long long mn : {256ll, 2048ll})
    for (long long k : {16ll, 1024ll, 65536ll})
      for (float sa : {1.0f, 1.155f, 1.25f, 2.0f, 5.0f, 30.0f, 300.0f})
        for (float sb : {1.0f, 1.25f, 8.0f}) {
          const ozaki::Spread s{sa, sb};
          const double t = ozaki::target(k, mn, mn);
          const int n = ozaki::choose_moduli(s, k, mn, mn);
          if (n < ozaki::kMaxModuli) EXPECT_LE(ozaki::predicted_error(n, s), t) << sa << " " << sb;
          if (n > ozaki::kMinModuli) EXPECT_GT(ozaki::predicted_error(n - 1, s), t) << sa << " " << sb;
          // More spread, a longer K within a regime or a smaller product never take fewer moduli.
          EXPECT_GE(ozaki::choose_moduli({sa * 4, sb}, k, mn, mn), n);
          if (k >= ozaki::kWholeChainMinK || mn < 2048) EXPECT_GE(ozaki::choose_moduli(s, 4 * k, mn, mn), n);
          EXPECT_GE(ozaki::choose_moduli(s, k, mn / 2, mn), n);
          EXPECT_GE(ozaki::choose_moduli(s, k, mn * mn, 1), n);
        }
  // Normal inputs (rms / gmean = 1.89) on both sides: 8 moduli from K = 16 to 65536 where cuBLAS may
  // split K; 7 where it sums each element in one chain (2^22 elements and more, both sides at least
  // 128, K from 64 to 65536), 8 otherwise.
  const ozaki::Spread normal = ozaki::kNormalSpread;
  for (long long k : {16ll, 1024ll, 65536ll}) EXPECT_EQ(ozaki::choose_moduli(normal, k, 256, 256), 8);
  for (long long k : {64ll, 1024ll, 65536ll}) EXPECT_EQ(ozaki::choose_moduli(normal, k, 2048, 2048), 7) << k;
  EXPECT_EQ(ozaki::choose_moduli(normal, 1024, 32768, 128), 7);
  EXPECT_EQ(ozaki::choose_moduli(normal, 1024, 2047, 2048), 8);
  EXPECT_EQ(ozaki::choose_moduli(normal, 1024, 65536, 127), 8);
  EXPECT_EQ(ozaki::choose_moduli(normal, 32, 2048, 2048), 8);
  EXPECT_EQ(ozaki::choose_moduli(normal, 65537, 2048, 2048), 8);  // beyond the longest K measured
}

// The scheme on the host, its integers exact (the CRT rebuild is exact: tested above): rows and
// columns scaled and rounded as the kernels do, X = A_int · B_int in 128-bit integers, scaled back.
// With the moduli the data's spread calls for, the contract measure max |C - C64| / (|A||B|)_ij
// meets the model's target for every distribution the accuracy study uses and for rows half zeros,
// in both of the target's regimes.
TEST(Ozaki, TheChosenModuliMeetTheTargetOnTheHost) {
  enum Dist { normal, uniform01, wide, half_zeros };
  const int rows = 32;
  for (long long mn : {256ll, 2048ll})
    for (long long k : {16ll, 256ll, 2048ll})
      for (Dist dist : {normal, uniform01, wide, half_zeros}) {
        std::mt19937 rng(unsigned(k * 7 + dist));
        std::normal_distribution<float> gauss;
        std::uniform_real_distribution<float> unit(0.0f, 1.0f);
        auto draw = [&]() -> float {
          switch (dist) {
            case normal: return gauss(rng);
            case uniform01: return unit(rng) + 0x1p-24f;
            case wide: return (rng() % 2 ? 1 : -1) * (1 + unit(rng)) * std::ldexp(1.0f, int(rng() % 41) - 20);
            case half_zeros: return rng() % 2 ? std::max(gauss(rng), 0.0f) : 0.0f;
          }
          return 0;
        };
        // op(A)'s rows and op(B)'s columns alike: rows x K each.
        std::vector<float> x[2];
        std::vector<int> e[2];
        ozaki::Spread s;
        for (int side = 0; side < 2; ++side) {
          x[side].resize(rows * k);
          for (auto& v : x[side]) v = draw();
          for (int r = 0; r < rows; ++r) {
            double squares = 0, log2s = 0;
            int nonzero = 0;
            for (long long c = 0; c < k; ++c)
              if (const double v = std::fabs(x[side][r * k + c]); v > 0)
                squares += v * v, log2s += std::log2(v), ++nonzero;
            int ex = 0;
            std::frexp(std::sqrt(squares), &ex);
            e[side].push_back(ex);
            if (nonzero) (side ? s.b : s.a) = std::max(side ? s.b : s.a, ozaki::row_spread(squares, log2s, nonzero, k));
          }
        }
        const int n = ozaki::choose_moduli(s, k, mn, mn);
        const auto q = ozaki::bits(n);
        std::vector<__int128> xi[2];
        for (int side = 0; side < 2; ++side)
          for (int r = 0; r < rows; ++r)
            for (long long c = 0; c < k; ++c)
              xi[side].push_back(
                  (__int128)std::rintl(std::ldexp((long double)x[side][r * k + c], (side ? q.b : q.a) - e[side][r])));
        double worst = 0;
        for (int i = 0; i < rows; ++i)
          for (int j = 0; j < rows; ++j) {
            __int128 acc = 0;
            long double exact = 0, magnitude = 0;
            for (long long c = 0; c < k; ++c) {
              acc += xi[0][i * k + c] * xi[1][j * k + c];
              const long double p = (long double)x[0][i * k + c] * x[1][j * k + c];
              exact += p, magnitude += std::fabs(p);
            }
            const long double got = std::ldexp((long double)acc, e[0][i] + e[1][j] - q.a - q.b);
            if (magnitude > 0) worst = std::max(worst, double(std::fabs(got - exact) / magnitude));
          }
        const char* names[] = {"normal", "uniform(0,1)", "wide", "half zeros"};
        // The model bounds the error (it is conservative), and the choice meets the target.
        EXPECT_LE(worst, ozaki::predicted_error(n, s)) << names[dist] << " K=" << k << " moduli=" << n;
        EXPECT_LE(worst, ozaki::target(k, mn, mn)) << names[dist] << " K=" << k << " moduli=" << n;
        std::printf("%-13s K=%5lld M=N=%5lld spread %.3g x %.3g: %2d moduli, error %.3g (target %.3g)\n", names[dist],
                    k, mn, s.a, s.b, n, worst, ozaki::target(k, mn, mn));
      }
}

TEST(Ozaki, ConstraintsSayWhatIsWrong) {
  const KernelFamily* f = find_family("ozaki");
  ASSERT_NE(f, nullptr);
  EXPECT_NO_THROW(parse_params(*f, ""));
  EXPECT_NO_THROW(parse_params(*f, "moduli=7,cluster=1x1"));
  auto message = [&](const std::string& text) {
    try {
      parse_params(*f, text);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("moduli=1").find("no bits"), std::string::npos);
  EXPECT_NE(message("tile=128x256").find("registers"), std::string::npos);
  EXPECT_NE(message("cluster=4x2").find("over 4 blocks"), std::string::npos);
  EXPECT_NE(message("tile=128x96").find("wgmma widths"), std::string::npos);
  EXPECT_NE(f->unsupported(parse_params(*f, ""), problem_of_shape(Op::gemm, {64, 64, 1 << 17}, Layout::row_major,
                                                                   Trans::no, Trans::no))
                .find("overflow"),
            std::string::npos);
}

// pitch=odd: plane rows of an even number of 128-byte lines, from 16 on, get one line more, so a
// tile's rows are never a power of two apart; tight keeps K rounded up to a line.
TEST(Ozaki, PlaneRowsAreAnOddNumberOfLinesApart) {
  const KernelFamily& f = *find_family("ozaki");
  auto bytes = [&](const char* pitch, long long m, long long n, long long k) {
    auto p = problem_of_shape(Op::gemm, {m, n, k}, Layout::row_major, Trans::no, Trans::no);
    return FamilyLauncher(f, parse_params(f, std::string("pitch=") + pitch)).workspace_bytes(p);
  };
  const size_t planes = ozaki::kMaxModuli;
  for (auto [m, n, k, extra] : {std::tuple{16384ll, 16384ll, 16384ll, true}, {300ll, 700ll, 2048ll, true},
                               {300ll, 700ll, 2047ll, true}, {300ll, 700ll, 16385ll, false},
                               {300ll, 700ll, 1024ll, false}, {300ll, 700ll, 2100ll, false}}) {
    const size_t tight = bytes("tight", m, n, k), odd = bytes("odd", m, n, k);
    EXPECT_EQ(odd - tight, extra ? planes * size_t(m + n) * 128 : 0) << m << "x" << n << "x" << k;
  }
  EXPECT_EQ(format_params(f, parse_params(f, "")).find("pitch=odd") != std::string::npos, true);
}

}  // namespace
}  // namespace gemmlab

// The epilogue's column exponents (hopper::QuadColumns): every column of a 64-, 128- or 256-wide
// tile held by one lane and register, and each quad's two columns found where they are held.
TEST(Ozaki, QuadColumnsHoldEachColumnOnce) {
  for (int width : {64, 128, 256}) {
    std::vector<int> held(width, 0);
    for (int lane = 0; lane < 32; ++lane)
      for (int k = 0; k < quad::registers(width); ++k)
        if (const int c = quad::held_column(lane, k); c < width) ++held[c];
    for (int c = 0; c < width; ++c) EXPECT_EQ(held[c], 1) << "width " << width << " column " << c;
    for (int j = 0; j < width / 8; ++j)
      for (int lane = 0; lane < 32; ++lane)
        for (int t = 0; t < 2; ++t) {
          ASSERT_LT(quad::slot(j, t), quad::registers(width));
          EXPECT_EQ(quad::held_column(quad::holder(j, lane), quad::slot(j, t)), 8 * j + 2 * (lane % 4) + t)
              << "width " << width << " quad " << j << " lane " << lane;
        }
  }
}
