#include <algorithm>
#include <cmath>

#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const skinny_source;
}

namespace gemmlab {

namespace {

auto s = [](long long x) { return std::to_string(x); };

class Skinny final : public KernelFamily {
 public:
  std::string name() const override { return "skinny"; }
  std::string description() const override {
    return "few rows of C (a GEMV of several vectors): op(B) streamed once with 16-byte loads, op(A)'s rows from "
           "L1, K split over blocks";
  }
  std::vector<ParamSpec> params() const override {
    return {{"rows", {8}, 1, 16, "rows of C a block computes (M up to rows reads op(B) once)"},
            {"threads", {128}, 32, 1024, "threads per block"},
            {"unroll", {4}, 1, 16, "16-byte pieces of op(B) a thread copies per round"},
            {"stages", {6}, 2, 16, "rounds of each thread's cp.async ring in shared memory"},
            {"lanes", {4}, 1, 32,
             "K-contiguous op(B): lanes sharing one column's K, 16 bytes each (a warp owns 32 / lanes columns)"},
            tiled::accum_param(true),
            {"splitk", {1}, 1, 1024, "slices of K computed by separate blocks, then summed in split order"},
            {"transpose", {0}, 0, 1,
             "compute Cᵀ = op(B)ᵀ·op(A)ᵀ (few columns of C become few rows), written transposed", {"no", "yes"}}};
  }
  const char* source() const override { return embedded::skinny_source; }
  std::string entry() const override { return "gemm_skinny"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    const int threads = v.at("threads")[0], rows = v.at("rows")[0], unroll = v.at("unroll")[0];
    const int lanes = v.at("lanes")[0], words = v.at("accum")[0] == 0 ? 1 : 2;
    if (threads % 32) out.push_back(s(threads) + " threads per block is not a whole number of warps");
    if (auto m = shared_memory_violation(smem(v)); !m.empty()) out.push_back(m);
    if (lanes & (lanes - 1)) out.push_back("lanes = " + s(lanes) + " must be a power of two (a warp's columns)");
    // The N-contiguous layout's sums (4 columns x rows, with fp64tile an FP32 run beside each), a
    // run's 16 rows of op(B) (ptxas hoists their loads), a step of op(A) for every row and
    // addressing: within 15 % of ptxas's count at 8 and 16 rows (16 rows with fp64tile: 254 and spills).
    const int runs = v.at("accum")[0] == 2 ? 1 : 0;
    if (int need = 4 * rows * (words + runs) + 64 + rows + 24; need > kMaxRegisters)
      out.push_back("rows " + s(rows) + " need ~" + s(need) + " registers per thread with these accumulators, over " +
                    s(kMaxRegisters));
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {tiled::define("ROWS", v.at("rows")[0]), tiled::define("THREADS", v.at("threads")[0]),
            tiled::define("UNROLL", v.at("unroll")[0]), tiled::define("STAGES", v.at("stages")[0]),
            tiled::define("LANES", v.at("lanes")[0]),
            tiled::define("ACCUM", v.at("accum")[0])};
  }
  // y: blocks of `rows` rows; x: blocks of columns, 4 a thread (op(B) N-contiguous) or 32 / lanes a warp.
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return {dim3(unsigned(ceil_div(p.n, columns(v, p))), unsigned(ceil_div(p.m, v.at("rows")[0]))),
            dim3(unsigned(v.at("threads")[0])), size_t(smem(v))};
  }
  int splits(const ParamValues& v, const Problem&, int) const override { return v.at("splitk")[0]; }
  std::string reduce_entry() const override { return "gemm_splitk_reduce"; }
  bool transposes(const ParamValues& v) const override { return v.at("transpose")[0] == 1; }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    if (ceil_div(p.m, v.at("rows")[0]) > 65535)
      return "M / " + s(v.at("rows")[0]) + " exceeds the 65535 limit of gridDim.y";
    if (ceil_div(p.n, columns(v, p)) > 2147483647LL)
      return "N / " + s(columns(v, p)) + " exceeds the 2^31-1 limit of gridDim.x";
    return {};
  }
  // op(B) read once per block row, op(A) once per block column (from L1 and L2 after the first);
  // per warp: N-contiguous, one 16-byte load of op(B) a k step and one of op(A) per row and 4 steps
  // (where K-contiguous and aligned, else one a step); K-contiguous, one 16-byte load of op(B) and
  // one per row of op(A) every 4·lanes k. C (or each split's partial sums) stored a float at a time.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    const auto g = geometry(v, p);
    const int rows = v.at("rows")[0], splits = v.at("splitk")[0], warps = v.at("threads")[0] / 32;
    const double row_blocks = g.grid.y, col_blocks = g.grid.x, k = double(p.k);
    KernelModel m;
    m.global_load_bytes = 4.0 * k * double(p.n) * row_blocks + 4.0 * k * double(p.m) * col_blocks;
    const double warp_blocks = row_blocks * col_blocks * warps;
    if (var.b_n_contig) {
      const double a_per_step = var.a_k_contig && var.a_vec ? 0.25 : 1.0;
      m.global_load_inst = warp_blocks * k * (1 + rows * a_per_step);
    } else {
      m.global_load_inst = warp_blocks * std::ceil(k / (4.0 * v.at("lanes")[0])) * (1 + rows);
    }
    m.shared_load_inst = m.shared_store_inst = m.shared_load_bytes = 0;
    const double outputs = double(p.m) * double(p.n) * splits * (splits > 1 && v.at("accum")[0] ? 2 : 1);
    m.global_store_inst = outputs / 32;
    m.global_store_bytes = 4.0 * outputs;
    if (p.beta != 0.0f && splits == 1) m.global_load_bytes += 4.0 * double(p.m) * double(p.n);
    m.assumptions = {"op(A) counted as read by every block column (L1 and L2 serve most of it)",
                     "stores counted as if coalesced"};
    if (splits > 1) m.assumptions.push_back("split-K: the reduce kernel is not counted");
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"rows", {"8", "16"}}, {"lanes", {"2", "4", "8"}}, {"accum", {"fp32", "fp64tile"}}});
  }

 private:
  // Each thread's ring: stages x unroll 16-byte pieces.
  static long long smem(const ParamValues& v) {
    return 16ll * v.at("stages")[0] * v.at("unroll")[0] * v.at("threads")[0];
  }
  static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
  static long long columns(const ParamValues& v, const Problem& p) {
    return p.trans_b == Trans::no ? 4ll * v.at("threads")[0] : (v.at("threads")[0] / 32) * (32 / v.at("lanes")[0]);
  }
};

}  // namespace

const KernelFamily& skinny_family() {
  static const Skinny f;
  return f;
}

}  // namespace gemmlab
