#include <cmath>

#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const outer_source;
}

namespace gemmlab {

namespace {

auto s = [](long long x) { return std::to_string(x); };

class Outer final : public KernelFamily {
  // FP64 sums: a block widens op(A)'s values for kWidenSpan steps of K at a time, from K = kWidenMinK
  // (at K = 1 the barriers cost 10 %, at 8 the conversions saved gain 11-19 %: perf-log 136).
  static constexpr int kWidenSpan = 32, kWidenMinK = 4;

 public:
  std::string name() const override { return "outer"; }
  std::string description() const override {
    return "short K (a rank-K update): op(B)'s columns in registers, one 16-byte store per row of C, many small blocks";
  }
  std::vector<ParamSpec> params() const override {
    // Defaults: enough rows to amortise op(B)'s loads, 8 steps of K unrolled (tk-8192x8192x8 in one).
    return {{"threads", {128}, 32, 1024, "threads per block; each owns 4 adjacent columns of C"},
            {"rows", {8}, 1, 32, "rows of C per thread (one 16-byte store each)"},
            {"kc", {8}, 1, 16, "steps of K unrolled (their loads in flight together)"},
            tiled::accum_param()};
  }
  const char* source() const override { return embedded::outer_source; }
  std::string entry() const override { return "gemm_outer"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    const int threads = v.at("threads")[0], rows = v.at("rows")[0], kc = v.at("kc")[0];
    if (threads % 32) out.push_back(s(threads) + " threads per block is not a whole number of warps");
    // The accumulators (rows x 4), the loads of kc unrolled steps in flight and a minimum of
    // addressing (ptxas: 94 registers at 8 x 8 with four steps' loads at a time, 167 at 16 x 16).
    if (int need = 4 * rows * (v.at("accum")[0] + 1) + rows * kc / 2 + 24; need > kMaxRegisters)
      out.push_back("rows " + s(rows) + " and kc " + s(kc) + " need ~" + s(need) + " registers per thread, over " +
                    s(kMaxRegisters));
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {tiled::define("THREADS", v.at("threads")[0]), tiled::define("ROWS", v.at("rows")[0]),
            tiled::define("KC", v.at("kc")[0]), tiled::define("ACCUM", v.at("accum")[0]),
            tiled::define("KSPAN", kWidenSpan), tiled::define("WIDEN_MIN_K", kWidenMinK)};
  }
  // x walks row blocks (up to 2^31 - 1), y column blocks of 4·threads columns.
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    const long long threads = v.at("threads")[0], rows = v.at("rows")[0];
    return {dim3(unsigned((p.m + rows - 1) / rows), unsigned((p.n + 4 * threads - 1) / (4 * threads))),
            dim3(unsigned(threads)), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    const long long threads = v.at("threads")[0], rows = v.at("rows")[0];
    if ((p.n + 4 * threads - 1) / (4 * threads) > 65535)
      return "N / " + s(4 * threads) + " exceeds the 65535 limit of gridDim.y";
    if ((p.m + rows - 1) / rows > 2147483647LL) return "M / " + s(rows) + " exceeds the 2^31-1 limit of gridDim.x";
    return {};
  }
  // Per thread and 4 steps of k: op(B)'s 4 columns, one 16-byte load a step where they are adjacent
  // and aligned, else 4; per row of op(A) (a broadcast: one address per warp) one 16-byte load where
  // its row is contiguous and aligned, else 4 (K's last K mod 4 steps scalar). C: one 16-byte store
  // per row where aligned, else four.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    const auto g = geometry(v, p);
    const int threads = v.at("threads")[0], rows = v.at("rows")[0];
    const double warps = double(g.grid.x) * g.grid.y * tiled::warps_of(threads);
    KernelModel m;
    const double k4 = double(p.k / 4), rest = double(p.k % 4);
    const double b_loads = var.b_n_contig && var.b_vec ? 4 : 16, a_loads = var.a_k_contig && var.a_vec ? 1 : 4;
    // FP64 sums: op(A) widened once per block into shared memory, kWidenSpan steps at a time (a
    // scalar load and store per thread and span where rows x span fit the threads), then read by
    // every thread as broadcasts, two rows' doubles per 16-byte load.
    const bool widen = v.at("accum")[0] != 0 && p.k >= kWidenMinK;
    const double widen_inst = std::ceil(double(p.k) / kWidenSpan) * std::ceil(double(rows) * kWidenSpan / threads);
    const double a_inst = widen ? widen_inst : k4 * rows * a_loads + rest * rows;
    m.global_load_inst = warps * (k4 * b_loads + rest * 4 + a_inst);
    m.global_load_bytes = warps * double(p.k) * 128.0 * (widen ? 4 : 4 + rows) +
                          (widen ? double(g.grid.x) * g.grid.y * rows * p.k * 4.0 : 0);
    m.shared_store_inst = widen ? warps * widen_inst : 0;
    m.shared_load_inst = widen ? warps * double(p.k) * rows / 2 : 0;
    m.shared_load_bytes = m.shared_load_inst * 32 * 16;
    tiled::add_epilogue(m, p, warps * rows * (var.c_vec ? 1 : 4));  // vec: a run-time test of C's alignment
    m.assumptions = {"edge blocks counted like full ones", "op(A)'s loads one address per warp (a broadcast)"};
    return m;
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store}; }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"64", "128", "256"}}, {"rows", {"4", "8", "16"}}, {"kc", {"4", "8", "16"}}});
  }
};

}  // namespace

const KernelFamily& outer_family() {
  static const Outer f;
  return f;
}

}  // namespace gemmlab
