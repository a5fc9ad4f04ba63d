// C = A·B (row-major, 1000 × 700 × 500) and y = A·x with gemmlab, checked against a double
// precision product on the host.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <gemmlab/gemmlab.hpp>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e = (call);                                                             \
    if (e != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                   \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

int main() {
  const int64_t m = 1000, n = 700, k = 500;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n), x(k), y(m);
  for (auto* v : {&a, &b, &x})
    for (auto& e : *v) e = dist(rng);

  float *da, *db, *dc, *dx, *dy;
  CHECK(cudaMalloc(&da, a.size() * 4));
  CHECK(cudaMalloc(&db, b.size() * 4));
  CHECK(cudaMalloc(&dc, c.size() * 4));
  CHECK(cudaMalloc(&dx, x.size() * 4));
  CHECK(cudaMalloc(&dy, y.size() * 4));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice));

  using gemmlab::Layout;
  using gemmlab::Trans;
  try {
    gemmlab::sgemm(Layout::row_major, Trans::no, Trans::no, m, n, k, 1.0f, da, k, db, n, 0.0f, dc, n);
    gemmlab::sgemv(Layout::row_major, Trans::no, m, k, 1.0f, da, k, dx, 1, 0.0f, dy, 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmlab: %s\n", e.what());
    return 1;
  }
  CHECK(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));

  double worst = 0, worst_y = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < k; ++p) ref += double(a[i * k + p]) * b[p * n + j];
      worst = std::max(worst, std::abs(ref - c[i * n + j]));
    }
    double ref = 0;
    for (int64_t p = 0; p < k; ++p) ref += double(a[i * k + p]) * x[p];
    worst_y = std::max(worst_y, std::abs(ref - y[i]));
  }
  auto choice = gemmlab::choose(gemmlab::Problem{gemmlab::Op::gemm, m, n, k});
  std::printf("sgemm %lldx%lldx%lld with %s %s (%s): max |error| %.2e\n", (long long)m, (long long)n, (long long)k,
              choice.family.c_str(), choice.params.c_str(), choice.source.c_str(), worst);
  std::printf("sgemv %lldx%lld: max |error| %.2e\n", (long long)m, (long long)k, worst_y);
  bool ok = worst < 1e-3 && worst_y < 1e-3;
  std::printf("%s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
