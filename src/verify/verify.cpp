#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "gemmlab/error.hpp"
#include "verify/verify.hpp"

namespace gemmlab {

namespace {

// Full float64 checks up to 2^31 multiply-adds and 2^24 elements; beyond, sampling.
bool small_enough(const Problem& p) {
  return double(p.m) * p.n * p.k <= double(1ll << 31) && double(p.m) * p.n <= double(1 << 24);
}

// Indices 0, n-1 and up to `count` more drawn from the seed: the edges are where tiles break.
std::vector<int64_t> sample(int64_t n, int count, std::mt19937_64& rng) {
  std::vector<int64_t> s = {0, n - 1};
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int t = 0; t < count && int64_t(s.size()) < n; ++t) s.push_back(pick(rng));
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// |x - y| / s, with NaN and Inf mapped to +Inf so that any comparison with a tolerance fails.
double scaled(double x, double y, double s) {
  double d = std::fabs(x - y);
  if (!std::isfinite(x) || std::isnan(d)) return INFINITY;
  if (s == 0) return d == 0 ? 0 : INFINITY;
  return d / s;
}

std::string where(int64_t i, int64_t j, double got, double want) {
  std::ostringstream os;
  os.precision(9);
  os << "C(" << i << "," << j << ") = " << got << ", expected " << want;
  return os.str();
}

}  // namespace

double tolerance(Precision p, int64_t k) {
  double fp32 = 0x1p-23 * (4.0 + 2.0 * std::sqrt(double(k)));
  return p == Precision::fp32 ? fp32 : 0x1p-9 + fp32;
}

Verifier::Verifier(const Problem& p, const float* a, const float* b, const float* c0, uint64_t seed)
    : ref_(p, a, b, c0), full_(small_enough(p)) {
  if (full_) {
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) positions_.emplace_back(i, j);
  } else {
    std::mt19937_64 rng(seed);
    auto rows = sample(p.m, 30, rng), cols = sample(p.n, 30, rng);
    for (int64_t i : rows)
      for (int64_t j = 0; j < p.n; ++j) positions_.emplace_back(i, j);
    for (int64_t j : cols)
      for (int64_t i = 0; i < p.m; ++i)
        if (!std::binary_search(rows.begin(), rows.end(), i)) positions_.emplace_back(i, j);
  }
  values_.resize(positions_.size());
  magnitudes_.resize(positions_.size());
#pragma omp parallel for schedule(dynamic, 4096)
  for (size_t t = 0; t < positions_.size(); ++t) {
    const auto e = ref_.element(positions_[t].first, positions_[t].second);
    values_[t] = e.value;
    magnitudes_[t] = e.magnitude;
  }
}

Verdict Verifier::check(const float* c, Precision precision) const {
  const Problem& p = ref_.problem();
  if (!full_ && cublas_.empty()) throw RuntimeError("verifier: a large problem needs cuBLAS's result first");
  auto cs = c_strides(p);
  Verdict v;
  v.method = full_ ? "fp64-full" : "fp64-sampled+cublas-all";
  v.tolerance = tolerance(precision, p.k);
  v.checked = int64_t(positions_.size());
  auto fail = [&](const std::string& what) {
    if (v.failures++ == 0) v.first_failure = what;
  };

  double err2 = 0, ref2 = 0;
  for (size_t t = 0; t < positions_.size(); ++t) {
    auto [i, j] = positions_[t];
    double got = c[cs.at(i, j)], want = values_[t];
    double e = scaled(got, want, ref_.scale(i, j));
    v.max_err = std::max(v.max_err, e);
    if (want != 0) v.max_rel_err = std::max(v.max_rel_err, std::abs(got - want) / std::abs(want));
    v.max_abs_err = std::max(v.max_abs_err, scaled(got, want, magnitudes_[t]));
    err2 += (got - want) * (got - want);
    ref2 += want * want;
    if (!(e <= v.tolerance)) fail(where(i, j, got, want));
  }
  v.rel_norm_err = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);

  if (!full_) {
    // cuBLAS SGEMM carries its own FP32 error: allow both.
    double tol = v.tolerance + tolerance(Precision::fp32, p.k);
    v.max_dev_cublas = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double got = c[cs.at(i, j)], want = cublas_[cs.at(i, j)];
        double e = scaled(got, want, ref_.scale(i, j));
        v.max_dev_cublas = std::max(v.max_dev_cublas, e);
        if (!(e <= tol)) fail(where(i, j, got, want) + " (cuBLAS SGEMM)");
      }
  }

  // Padding between the rows (columns) of C starts as NaN (all bits set) and must stay so.
  auto sc = stored_c(p);
  for (int64_t line = 0; line + 1 < sc.lines(); ++line)
    for (int64_t pos = sc.min_ld(); pos < sc.ld; ++pos) {
      float x = c[line * sc.ld + pos];
      if (std::bit_cast<uint32_t>(x) != 0xFFFFFFFFu)
        fail("padding of C written at line " + std::to_string(line) + ", offset " + std::to_string(pos));
    }
  v.passed = v.failures == 0;
  return v;
}

}  // namespace gemmlab
