#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const warptiled_source;
}

namespace gemmlab {

namespace {

auto s = [](int x) { return std::to_string(x); };

class Warptiled final : public KernelFamily {
 public:
  std::string name() const override { return "warptiled"; }
  std::string description() const override {
    return "block tile -> warp tile -> thread tile with cp.async stages and grouped block order";
  }
  int min_arch() const override { return 80; }
  std::vector<ParamSpec> params() const override {
    // Defaults: the fastest point of the H100 sweeps at 4096 and 8192 (docs/perf-log.md, entries 1 to 5).
    return {{"tile", {128, 256, 16}, 4, 512, "block tile BM x BN x BK"},
            {"warp", {64, 64}, 4, 256, "warp tile WM x WN"},
            {"vpt", {8, 16}, 4, 32, "values per thread TM x TN (multiples of 4)"},
            {"stages", {2}, 2, 8, "shared-memory stages of the cp.async pipeline"},
            {"conflict", {1}, 0, 2, "bank conflicts of the transposing copies", {"none", "pad", "swizzle"}},
            {"group", {8}, 1, 64, "block rows that sweep the columns together (L2 reuse)"},
            {"fragments", {0}, 0, 1, "register fragments of the k steps", {"single", "double"}},
            {"splitk", {1}, 1, 1024, "slices of K computed by separate blocks, then summed (small M·N, huge K)"},
            {"minblocks", {1}, 1, 4, "blocks per SM the register allocation must allow (__launch_bounds__)"},
            tiled::accum_param(/*tile_sums=*/true),
            tiled::persistent_param()};
  }
  const char* source() const override { return embedded::warptiled_source; }
  std::string entry() const override { return "gemm_warptiled"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& r = v.at("vpt");
    std::vector<std::string> out;
    if (!tiled::warp_tile_fits(out, v)) return out;
    tiled::kstage_violations(out, v, threads(v), v.at("stages")[0]);
    if (auto e = shared_memory_violation(smem(v)); out.empty() && !e.empty()) out.push_back(e);
    int cap = 65536 / (threads(v) * v.at("minblocks")[0]);
    // The accumulators (two registers each in FP64, one more for fp64tile's FP32 tile sum) and a
    // minimum of addressing.
    const int accum = v.at("accum")[0];
    int need = r[0] * r[1] * (accum + 1) + 16;
    if (out.empty() && need > std::min(cap, kMaxRegisters))
      out.push_back("minblocks " + s(v.at("minblocks")[0]) + " caps registers at " + s(std::min(cap, kMaxRegisters)) +
                    " per thread, under the ~" + s(need) + " the " + s(r[0]) + "x" + s(r[1]) + " tile needs" + (accum ? " with FP64 accumulators" : ""));
    if (accum == 2 && v.at("fragments")[0] == 1)
      out.push_back("accum=fp64tile sums each K tile in one step (fragments=single): double fragments run k steps across tiles");
    if (tiled::persistent(v) && v.at("fragments")[0] == 1)
      out.push_back(
          "persistent=yes runs each K tile in one step (fragments=single): double fragments run k steps across tiles");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &w = v.at("warp"), &r = v.at("vpt");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("WM", w[0]), tiled::define("WN", w[1]), tiled::define("TM", r[0]),
            tiled::define("TN", r[1]), tiled::define("STAGES", v.at("stages")[0]),
            tiled::define("CONFLICT", v.at("conflict")[0]), tiled::define("GROUP", v.at("group")[0]),
            tiled::define("MINBLOCKS", v.at("minblocks")[0]), tiled::define("FRAGS", v.at("fragments")[0] + 1),
            tiled::define("ACCUM", v.at("accum")[0]), tiled::define("PERSISTENT", v.at("persistent")[0])};
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
  // Split-K's slices write raw partial products (splits x M x N floats); the reduce kernel is not
  // counted.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    auto m = tiled::chunked_model(p, var, t[0], t[1], t[2], r[0], r[1], threads(v), true);
    const int splits = this->splits(v, p, 0);
    if (splits > 1) {
      m.global_store_inst *= splits;
      m.global_store_bytes *= splits;
      m.assumptions.push_back("split-K: the reduce kernel is not counted");
    }
    return m;
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store, Ablation::no_load}; }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"128x128x8", "128x128x16", "128x256x8", "256x128x8", "128x64x16",
                                           "64x128x16", "64x64x16"}},
                                 {"warp", {"32x64", "64x32", "64x64", "32x32"}},
                                 {"vpt", {"8x8", "4x8", "8x4", "8x16", "16x8"}},
                                 {"stages", {"2", "3", "4"}},
                                 {"conflict", {"pad"}},
                                 {"group", {"8"}},
                                 {"minblocks", {"1", "2"}}});
  }

 private:
  static int threads(const ParamValues& v) {
    return (v.at("tile")[0] / v.at("warp")[0]) * (v.at("tile")[1] / v.at("warp")[1]) * 32;
  }
  // Persistent blocks stage an unaligned C beyond the operand ring (which holds the next tiles'
  // operands): each warp's rows of its sub-tiles, WM/TM rows of WN + 4 floats (ThreadTile::
  // store_staged). The tiled kernel reuses the ring.
  static long long smem(const ParamValues& v) {
    auto& w = v.at("warp");
    const long long stage_c = tiled::persistent(v) ? 4ll * threads(v) / 32 * (w[0] / v.at("vpt")[0]) * (w[1] + 4) : 0;
    return tiled::kstage_smem(v, v.at("stages")[0]) + stage_c;
  }
};

}  // namespace

const KernelFamily& warptiled_family() {
  static const Warptiled f;
  return f;
}

}  // namespace gemmlab
