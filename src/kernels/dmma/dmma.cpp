#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const dmma_source;
}

namespace gemmlab {

namespace {

class Dmma final : public KernelFamily {
 public:
  std::string name() const override { return "dmma"; }
  std::string description() const override {
    return "FP64 tensor cores (mma.sync m16n8k8 .f64) on widened floats: exact products summed in FP64, FP32-accurate";
  }
  // The m16n8k4/8/16 shapes of FP64 mma are 9.0's (8.0 has only m8n8k4).
  int min_arch() const override { return 90; }
  bool fp64_accumulators(const ParamValues&) const override { return true; }
  std::vector<ParamSpec> params() const override {
    return {{"tile", {64, 64, 16}, 16, 256, "block tile BM x BN x BK"},
            {"warp", {32, 32}, 16, 128, "warp tile WM x WN (multiples of the 16x8 mma tile)"},
            {"mma", {1}, 0, 2, "the FP64 mma's shape: its k of 4, 8 or 16", {"m16n8k4", "m16n8k8", "m16n8k16"}},
            {"stages", {3}, 2, 8, "shared-memory stages of the cp.async pipeline"},
            {"group", {8}, 1, 64, "block rows that sweep the columns together (L2 reuse)"},
            {"splitk", {1}, 1, 1024, "slices of K computed by separate blocks, then summed in FP64"},
            tiled::persistent_param(),
            {"store", {0}, 0, 1,
             "C's stores: direct from the mma fragments (a warp writes 8 rows in 32-byte pieces) or staged "
             "through shared memory (whole 128-byte runs of a row)",
             {"direct", "staged"}}};
  }
  const char* source() const override { return embedded::dmma_source; }
  std::string entry() const override { return "gemm_dmma"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& w = v.at("warp");
    // FP64 accumulators and two k steps' fragments (ptxas loads the next step's early), two
    // registers a double, and addressing: within 10 % of ptxas's count on the search space.
    const int mt = w[0] / 16, ntl = w[1] / 8, k = mma_k(v);
    std::vector<std::string> out;
    tiled::mma_tile_violations(out, v, k, smem(v), 2 * (mt * ntl * 4 + 2 * (mt * k / 2 + ntl * k / 4)) + 24);
    // A tile-per-block kernel stages C in its operand ring once the last K tile is summed: the ring
    // of the smaller of the two layouts must hold every warp's row block.
    auto s = [](long long x) { return std::to_string(x); };
    if (staged(v) && !tiled::persistent(v) && stage_floats(v) > ring_floats(v, false))
      out.push_back("store=staged needs " + s(stage_floats(v) * 4) + " bytes of shared memory for C's row " +
                    "blocks, over the " + s(ring_floats(v, false) * 4) +
                    " of the operand stages: more stages, or persistent=yes");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &w = v.at("warp");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("WM", w[0]), tiled::define("WN", w[1]), tiled::define("MMA_K", mma_k(v)),
            tiled::define("STAGES", v.at("stages")[0]), tiled::define("GROUP", v.at("group")[0]),
            tiled::define("PERSISTENT", v.at("persistent")[0]),
            tiled::define("STORE_STAGED", v.at("store")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return tiled::grid(p, v.at("tile")[0], v.at("tile")[1], dim3(threads(v)), smem(v), tiled::persistent(v));
  }
  bool persistent(const ParamValues& v) const override { return tiled::persistent(v); }
  int splits(const ParamValues& v, const Problem&, int) const override { return v.at("splitk")[0]; }
  std::string reduce_entry() const override { return "gemm_splitk_reduce"; }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0], v.at("tile")[1], tiled::persistent(v));
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store, Ablation::no_load}; }
  // Per block and K tile: the cp.async copies of both tiles; per warp and mma step, MT·k/2 + NTL·k/4
  // 32-bit fragment loads (conflict-free by the padding); split-K writes two planes per partial sum.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &w = v.at("warp");
    const int nt = threads(v), warps = nt / 32, k = mma_k(v);
    const auto tl = tiling(v, p);
    const double steps = tl.blocks * tl.ktiles;
    auto copies = [&](int outer, bool k_contig, bool vec) { return double(outer) * t[2] / (!k_contig && vec ? 4 : 1) / nt; };
    KernelModel m;
    m.global_load_inst = 0;
    m.global_async_inst =
        steps * warps * (copies(t[0], var.a_k_contig, var.a_vec) + copies(t[1], !var.b_n_contig, var.b_vec));
    m.global_load_bytes = steps * 4.0 * (t[0] + t[1]) * t[2];
    m.shared_store_inst = 0;
    m.shared_load_inst = steps * warps * (t[2] / k) * double(w[0] / 16 * k / 2 + w[1] / 8 * k / 4);
    m.shared_load_bytes = m.shared_load_inst * 32 * 4;
    const int splits = v.at("splitk")[0];
    // Per warp and m16 row block: direct, 2 stores an mma tile (two planes a partial sum with
    // split-K); staged, 16 rows of WN floats, 16 bytes a lane where C allows, else 4 (split-K's
    // partial sums stay direct).
    const double per_block = staged(v) && splits == 1 ? 16.0 * w[1] / (var.c_vec ? 128 : 32)
                                                      : double(w[1] / 8) * 2 * (splits > 1 ? 2 : 1);
    tiled::add_epilogue(m, p, tl.blocks * warps * double(w[0] / 16) * per_block);
    m.assumptions = {"edge tiles counted like interior ones"};
    if (splits > 1) m.assumptions.push_back("split-K: two planes per partial sum; the reduce kernel is not counted");
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"64x64x16", "128x64x16", "128x128x16", "64x64x32", "32x128x16"}},
                                 {"warp", {"32x32", "64x32"}},
                                 {"mma", {"m16n8k8", "m16n8k16"}},
                                 {"stages", {"3"}}});
  }

 private:
  static int mma_k(const ParamValues& v) { return 4 << v.at("mma")[0]; }
  static int threads(const ParamValues& v) {
    return (v.at("tile")[0] / v.at("warp")[0]) * (v.at("tile")[1] / v.at("warp")[1]) * 32;
  }
  static bool staged(const ParamValues& v) { return v.at("store")[0] == 1; }
  // The operand ring in floats: each tile in the larger of its two layouts (k-major rows of BM + 8,
  // outer-major of BK + 4), or (largest = false) the smaller, the least a variant's ring holds.
  static long long ring_floats(const ParamValues& v, bool largest) {
    auto& t = v.at("tile");
    auto floats = [&](long long outer) {
      const long long k_major = t[2] * (outer + 8), outer_major = outer * (t[2] + 4);
      return largest ? std::max(k_major, outer_major) : std::min(k_major, outer_major);
    };
    return v.at("stages")[0] * (floats(t[0]) + floats(t[1]));
  }
  // store=staged: each warp's m16 row block of C (WarpTile::kStageFloats).
  static long long stage_floats(const ParamValues& v) { return threads(v) / 32 * 16ll * (v.at("warp")[1] + 8); }
  // Persistent blocks keep the next tiles' operands in the ring while a tile is stored: the staged
  // row blocks lie beyond it.
  static long long smem(const ParamValues& v) {
    return 4 * (ring_floats(v, true) + (staged(v) && tiled::persistent(v) ? stage_floats(v) : 0));
  }
  // Blocks (split slices included) and the K tiles each runs.
  static tiled::Tiling tiling(const ParamValues& v, const Problem& p) {
    auto& t = v.at("tile");
    const int splits = v.at("splitk")[0];
    Problem q = p;
    q.k = (p.k + splits - 1) / splits;
    auto tl = tiled::tiling(q, t[0], t[1], t[2]);
    tl.blocks *= splits;
    return tl;
  }
};

}  // namespace

const KernelFamily& dmma_family() {
  static const Dmma f;
  return f;
}

}  // namespace gemmlab
