#include "kernels/tiled.hpp"
#include "kernels/tma_operands.hpp"

namespace gemmlab::embedded {
extern const char* const hopper_simt_source;
}

namespace gemmlab {

namespace {

auto s = [](int x) { return std::to_string(x); };

class HopperSimt final : public tiled::TailFamily {
 public:
  std::string name() const override { return "hopper-simt"; }
  std::string description() const override {
    return "FP32 on the CUDA cores fed by TMA: a producer warpgroup, an mbarrier pipeline, FFMA-only consumer warps, "
           "persistent tiles, a split or streamed (stream-K) tail for the last wave";
  }
  int min_arch() const override { return 90; }
  bool arch_specific() const override { return true; }  // setmaxnreg is sm_90a
  std::vector<ParamSpec> params() const override {
    // Defaults: the best of the search space at 4096³ on the H100 (results/h100/simt/).
    std::vector<ParamSpec> out = {
        {"tile", {128, 128, 32}, 4, 256, "block tile BM x BN x BK (each side at most 256: one TMA box)"},
        {"warp", {32, 64}, 4, 256, "warp tile WM x WN"},
        {"vpt", {8, 8}, 4, 32, "values per thread TM x TN (multiples of 4)"},
        {"stages", {6}, 2, 12, "shared-memory slots of the TMA pipeline"},
        {"group", {8}, 1, 64, "tile rows per band of the persistent tile order (L2 reuse)"},
        {"conflict", {1}, 0, 2,
         "bank conflicts of K-contiguous tiles (row-major A, transposed B): none, TMA's swizzle of their rows "
         "where a quarter-warp reads several of them at one k, or of every K-contiguous tile (all)",
         {"none", "swizzle", "all"}},
        {"fragments", {0}, 0, 2,
         "register fragments: each step's loaded just before its FFMAs (single); B's one step ahead into a second "
         "set (double-b); A's and B's (double)",
         {"single", "double-b", "double"}},
        {"transpose", {0}, 0, 1,
         "compute C, or Cᵀ = op(B)ᵀ·op(A)ᵀ written transposed: each operand's tile lies the other way round "
         "(row-major NN runs as TT), C stored a value at a time",
         {"no", "yes"}}};
    add_tail_params(out, 256);
    return out;
  }
  const char* source() const override { return embedded::hopper_simt_source; }
  std::string entry() const override { return "gemm_hopper_simt"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    std::vector<std::string> out;
    if (r[0] % 4 || r[1] % 4) out.push_back("vpt " + s(r[0]) + "x" + s(r[1]) + " must be multiples of 4 (16-byte loads)");
    // A K-contiguous tile is read 4 k at a time and its rows must be whole 16-byte units for TMA.
    if (t[2] % 4) out.push_back("tile.k " + s(t[2]) + " is not a multiple of 4 (16-byte loads of 4 k)");
    if (t[2] > 64) out.push_back("tile.k " + s(t[2]) + " is over 64 (one K tile is unrolled into the FFMA stream)");
    if (v.at("conflict")[0] >= 1 && t[2] != 8 && t[2] != 16 && t[2] != 32)
      out.push_back("conflict=swizzle or all needs tile.k 8, 16 or 32 (a K-contiguous row of 32, 64 or 128 bytes: one TMA "
                    "swizzle span), not " + s(t[2]) + "; or conflict=none");
    tail_violations(out, v);
    if (!tiled::warp_tile_fits(out, v) || !out.empty()) return out;
    if (consumer_warps(v) % 4)
      out.push_back(s(consumer_warps(v)) + " consumer warps do not fill whole warpgroups (setmaxnreg moves registers "
                    "per warpgroup)");
    if (threads(v) > kMaxThreadsPerBlock)
      out.push_back(s(threads(v)) + " threads per block (consumers and the producer warpgroup), over " +
                    s(kMaxThreadsPerBlock));
    if (auto e = shared_memory_violation(smem(v)); !e.empty()) out.push_back(e);
    if (const int need = registers(v); out.empty() && need > consumer_registers(v))
      out.push_back("needs about " + s(need) + " registers per thread (accumulators and fragments), over the " +
                    s(consumer_registers(v)) + " that " + s(consumer_warps(v)) + " consumer warps get");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &w = v.at("warp"), &r = v.at("vpt");
    return {tiled::define("BM", t[0]),          tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("WM", w[0]),          tiled::define("WN", w[1]), tiled::define("TM", r[0]),
            tiled::define("TN", r[1]),          tiled::define("STAGES", v.at("stages")[0]),
            tiled::define("GROUP", v.at("group")[0]), tiled::define("FRAGMENTS", v.at("fragments")[0] + 1),
            tiled::define("SWIZZLE_A", swizzled(v).a),
            tiled::define("SWIZZLE_B", swizzled(v).b), tiled::define("TAIL_STREAM", stream(v))};
  }
  // A block per tile, or with the stream up to one per K tile (the launcher keeps the resident ones).
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    const auto tl = tiling(p, v);
    const double blocks = stream(v) ? tl.blocks * std::max(1.0, tl.ktiles) : tl.blocks;
    return {dim3(unsigned(std::min(blocks, double(1 << 30)))), dim3(unsigned(threads(v))), size_t(smem(v))};
  }
  bool persistent(const ParamValues&) const override { return true; }
  bool transposes(const ParamValues& v) const override { return v.at("transpose")[0] == 1; }
  TmaOperands tma_operands(const ParamValues& v) const override {
    auto& t = v.at("tile");
    return {t[0], t[1], t[2], swizzled(v).a, swizzled(v).b, "gemm_stage_rows"};
  }
  // What TMA needs of the operands' layout that no staged copy gives (the launcher stages an
  // operand whose leading dimension or address TMA cannot read as given).
  std::string unsupported(const ParamValues&, const Problem& p) const override {
    auto sa = op_a_strides(p), sb = op_b_strides(p);
    if (auto why = operand_layout_problem(p.m, p.k, sa.row, sa.col, p.trans_a == Trans::no); !why.empty())
      return "A: " + why;
    if (auto why = operand_layout_problem(p.n, p.k, sb.col, sb.row, p.trans_b == Trans::yes); !why.empty())
      return "B: " + why;
    return {};
  }
  // Per block and K tile: two TMA loads (no load instructions in any thread); per consumer warp and
  // chunk of 4 k: TM + TN 16-byte shared loads. The split tail's splits each store partial sums.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    const auto tl = tiling(p, v);
    const int splits = v.at("splitk")[0];
    const double consumer_warps = this->consumer_warps(v), chunks = t[2] / 4.0;
    KernelModel m;
    m.global_load_inst = 0;
    m.global_async_inst = 0;
    m.tma_load_inst = tl.blocks * tl.ktiles * 2;
    m.global_load_bytes = tl.blocks * tl.ktiles * 4.0 * (t[0] + t[1]) * t[2];
    m.shared_load_inst = tl.blocks * tl.ktiles * consumer_warps * chunks * (r[0] + r[1]);
    m.shared_load_bytes = m.shared_load_inst * 32 * 16;
    m.shared_store_inst = 0;
    // Four columns per store where the thread owns adjacent columns (B outer-contiguous) and C allows it.
    const bool vec = var.b_n_contig && var.c_vec;
    tiled::add_epilogue(m, p, tl.blocks * splits * consumer_warps * r[0] * r[1] / (vec ? 4.0 : 1.0));
    m.global_store_bytes *= splits;
    m.assumptions = {"edge tiles counted like interior ones (TMA loads whole boxes, zero-filled)"};
    if (stream(v)) m.assumptions.push_back("stream: the tail's partial sums not counted");
    if (splits > 1)
      m.assumptions.push_back("split tail: every tile counted as split (an upper bound: only the last wave's are), "
                              "the partial sums' reads not counted");
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"128x256x16", "256x128x16", "128x128x16", "128x256x8", "128x128x32"}},
                                 {"warp", {"64x64", "32x64", "64x32"}},
                                 {"vpt", {"8x16", "16x8", "8x8", "4x16"}},
                                 {"stages", {"3", "4", "6"}}});
  }

 private:
  // Which operands' K-contiguous tiles are swizzled: those of which a quarter-warp (8 lanes, one
  // wavefront of 16-byte loads) reads several rows at one k. op(A)'s rows go by lane / LANES_N,
  // op(B)ᵀ's by lane % LANES_N (LANES_N = WN / TN): the one with one row per quarter-warp reads it
  // as a broadcast, and its loads keep immediate offsets (conflict=all swizzles it too: whether
  // the 4 rows a warp's quarters read then share a wavefront is the experiment).
  struct Swizzled {
    bool a, b;
  };
  static Swizzled swizzled(const ParamValues& v) {
    const int conflict = v.at("conflict")[0];
    const int lanes_n = v.at("warp")[1] / v.at("vpt")[1];
    return {conflict == 2 || (conflict == 1 && lanes_n < 8), conflict == 2 || (conflict == 1 && lanes_n > 1)};
  }
  static int consumer_warps(const ParamValues& v) {
    return (v.at("tile")[0] / v.at("warp")[0]) * (v.at("tile")[1] / v.at("warp")[1]);
  }
  // The consumers and the producer warpgroup.
  static int threads(const ParamValues& v) { return consumer_warps(v) * 32 + 128; }
  // A consumer thread's registers, as the kernel computes them: the launch gives every thread
  // 65536 / threads (in units of 8, at most 248); with setmaxnreg the producer warpgroup keeps 56
  // and the consumers share what it releases, up to 240. Otherwise ptxas may use up to 255.
  static int consumer_registers(const ParamValues& v) {
    const int launch = std::min(248, 65536 / threads(v) / 8 * 8);
    const int share = std::min(240, (launch + 4 * (launch - 56) / consumer_warps(v)) / 8 * 8);
    return share > launch ? share : std::min(kMaxRegisters, 65536 / threads(v));
  }
  // Accumulators, one chunk of A (TM x 4) and one 4 x 4 block of B (two of B with double-b, two of
  // each with double), ~24 for addresses and the loop.
  static int registers(const ParamValues& v) {
    auto& r = v.at("vpt");
    const int frag = v.at("fragments")[0];
    return r[0] * r[1] + 4 * r[0] * (frag == 2 ? 2 : 1) + 16 * (frag ? 2 : 1) + 24;
  }
  static long long smem(const ParamValues& v) {
    auto& t = v.at("tile");
    auto tile_bytes = [&](int outer) { return (4ll * outer * t[2] + 1023) / 1024 * 1024; };
    // Stages, 1024 bytes to align them, two mbarriers per stage.
    return v.at("stages")[0] * (tile_bytes(t[0]) + tile_bytes(t[1])) + 1024 + 16ll * v.at("stages")[0];
  }
  static long long tiles(const ParamValues& v, const Problem& p) {
    auto& t = v.at("tile");
    return ((p.m + t[0] - 1) / t[0]) * ((p.n + t[1] - 1) / t[1]);
  }
  static tiled::Tiling tiling(const Problem& p, const ParamValues& v) {
    auto& t = v.at("tile");
    return tiled::tiling(p, t[0], t[1], t[2]);
  }
};

}  // namespace

const KernelFamily& hopper_simt_family() {
  static const HopperSimt f;
  return f;
}

}  // namespace gemmlab
