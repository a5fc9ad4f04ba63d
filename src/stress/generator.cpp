// The stress's cases, and the route the dispatcher gives each (no CUDA call: CPU-tested).
#include <algorithm>
#include <sstream>

#include "stress/stress.hpp"
#include "kernels/tma_operands.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"

namespace gemmlab {

std::string to_string(StressKind k) {
  switch (k) {
    case StressKind::gemv: return "gemv";
    case StressKind::vector: return "vector";
    case StressKind::split_k: return "split-k";
    case StressKind::large: return "large";
    case StressKind::staged: return "staged";
    case StressKind::tiny_k: return "tiny-k";
    case StressKind::skinny: return "skinny";
  }
  return "?";
}

std::string StressCase::describe() const {
  std::ostringstream os;
  os << to_string(kind) << ": " << gemmlab::describe(problem) << " ld " << problem.lda << "," << problem.ldb << ","
     << problem.ldc << " alpha " << problem.alpha << " beta " << problem.beta << " offsets " << offset_a << ","
     << offset_b << "," << offset_c << " " << to_string(mode) << (in_graph ? " in a graph" : "")
     << (first_seen ? " first seen" : "");
  return os.str();
}

StressGenerator::StressGenerator(uint64_t seed, int fresh_percent, int graph_percent, int64_t max_mn, double max_mnk,
                                 std::vector<MathMode> modes)
    : rng_(seed),
      fresh_percent_(fresh_percent),
      graph_percent_(graph_percent),
      max_mn_(max_mn),
      max_mnk_(max_mnk),
      modes_(modes.empty() ? std::vector<MathMode>{MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32}
                           : std::move(modes)) {}

StressCase StressGenerator::fresh() {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); };
  auto coin = [&](int percent) { return int(rng_() % 100) < percent; };
  // Weights: the routes most likely to hide a fault (split reductions, staged copies) come often.
  static const std::pair<StressKind, int> kinds[] = {{StressKind::gemv, 10},   {StressKind::vector, 10},
                                                     {StressKind::split_k, 20}, {StressKind::large, 25},
                                                     {StressKind::staged, 10}, {StressKind::tiny_k, 10},
                                                     {StressKind::skinny, 15}};
  int w = int(rng_() % 100);
  StressCase c;
  for (auto [k, weight] : kinds)
    if ((w -= weight) < 0) {
      c.kind = k;
      break;
    }
  c.mode = modes_[rng_() % modes_.size()];
  const Layout layout = coin(50) ? Layout::col_major : Layout::row_major;
  // Half the calls NN, as most programs call: the rest any transposes.
  const bool nn = coin(50);
  const Trans ta = !nn && coin(50) ? Trans::yes : Trans::no, tb = !nn && coin(50) ? Trans::yes : Trans::no;
  int64_t m = 0, n = 0, k = 0;
  switch (c.kind) {
    case StressKind::gemv: m = pick(1, 4000), k = pick(1, 4000); break;
    case StressKind::vector:
      (coin(50) ? m : n) = 1;
      (m ? n : m) = pick(2, 4000);
      k = pick(1, 6000);
      break;
    case StressKind::split_k:  // a few tiles (M, N up to 400), or a few waves of them (issue 26's 700 x 320)
      if (coin(50)) m = pick(8, 400), n = pick(8, 400), k = pick(5000, 100000);
      else m = pick(500, 1000), n = 4 * pick(50, 125), k = 4 * pick(2500, 10000);  // rows TMA reads in place
      break;
    case StressKind::large:
    case StressKind::staged: m = pick(300, 2500), n = pick(300, 2500), k = pick(64, 2500); break;
    case StressKind::tiny_k: m = pick(200, 2000), n = pick(200, 2000), k = pick(1, 40); break;
    case StressKind::skinny:
      if (coin(50)) m = pick(2, 16), n = pick(100, 3000);
      else m = pick(100, 3000), n = pick(2, 96);
      k = pick(100, 3000);
      break;
  }
  // Verification costs a cuBLAS product and a comparison of C: keep both bounded.
  while (double(m) * double(std::max<int64_t>(n, 1)) > double(max_mn_)) (m > n ? m : n) /= 2;
  while (double(m) * double(std::max<int64_t>(n, 1)) * double(k) > max_mnk_) k = std::max<int64_t>(1, k / 2);
  Problem p = c.kind == StressKind::gemv ? Problem::gemv(m, k, layout, ta)
                                         : problem_of_shape(Op::gemm, {m, n, k}, layout, ta, tb);
  if (c.kind == StressKind::gemv) c.mode = MathMode::strict_fp32;  // sgemv has no mode
  const Problem tight = normalized(p);
  // Padded leading dimensions; a staged case makes them odd, which TMA cannot read in place.
  auto padded = [&](int64_t ld, bool odd) {
    if (odd) return ld % 4 ? ld : ld + pick(1, 3);
    return coin(30) ? ld + pick(1, 5) : ld;
  };
  const bool odd = c.kind == StressKind::staged;
  p.lda = padded(stored_a(tight).min_ld(), odd);
  if (p.op == Op::gemm) {
    p.ldb = padded(stored_b(tight).min_ld(), odd);
    p.ldc = padded(stored_c(tight).min_ld(), false);
  }
  static const float alphas[] = {1.0f, 1.0f, -0.75f, 2.5f}, betas[] = {0.0f, 0.0f, 1.0f, 0.5f};
  p.alpha = alphas[rng_() % 4];
  p.beta = betas[rng_() % 4];
  c.problem = normalized(p);
  if (coin(25)) c.offset_a = int(rng_() % 4), c.offset_b = int(rng_() % 4), c.offset_c = int(rng_() % 4);
  c.first_seen = true;
  return c;
}

StressCase StressGenerator::next() {
  std::lock_guard lock(mu_);
  StressCase c;
  if (seen_.empty() || int(rng_() % 100) < fresh_percent_) {
    c = fresh();
    if (seen_.size() < 4096) seen_.push_back(c);
    else seen_[rng_() % seen_.size()] = c;
  } else {
    // A shape seen before (the library's plan exists) with new data and new scalars.
    c = seen_[rng_() % seen_.size()];
    c.first_seen = false;
    static const float alphas[] = {1.0f, -0.5f, 3.0f}, betas[] = {0.0f, 1.0f, -0.25f};
    c.problem.alpha = alphas[rng_() % 3];
    c.problem.beta = betas[rng_() % 3];
  }
  c.in_graph = int(rng_() % 100) < graph_percent_;
  return c;
}

std::string stress_route(const StressCase& c, const GpuModel& gpu) {
  const bool unaligned = c.offset_a % 4 || c.offset_b % 4 || c.offset_c % 4;
  const std::string tail = unaligned ? " unaligned" : "";
  if (c.problem.op == Op::gemv) return "gemv" + tail;
  const Problem p = canonical(c.problem);
  const auto d = dispatch(gpu, p, c.mode);
  if (d.route != Route::gemm) return "gemv-route" + tail;
  std::string r = d.family == "tf32" ? "tf32-mma" : d.family;
  if (auto& f = *find_family(d.family); f.transposes(parse_params(f, d.params))) r += " transposed";
  if (d.splits > 1) r += d.family == "warptiled" ? " split-k" : " split-tail";
  const auto st = problem_staging(p);
  if (d.family == "hopper-simt" && (st.a.pitch || st.b.pitch || c.offset_a % 4 || c.offset_b % 4)) r += " staged";
  return r + tail;
}

}  // namespace gemmlab
