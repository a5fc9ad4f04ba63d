#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const tf32_source;
}

namespace gemmlab {

namespace {

class Tf32 final : public KernelFamily {
 public:
  std::string name() const override { return "tf32"; }
  std::string description() const override {
    return "tensor cores (mma.sync m16n8k8 TF32): 3xTF32 (FP32-accurate) or 1xTF32 (lower precision)";
  }
  int min_arch() const override { return 80; }
  // Truncating the big part leaves a small·small term of up to 2^-20 of each product out (with
  // rounding 2^-22): measured over the FP32 tolerance at K = 1, so truncate is labelled TF32-class.
  bool lower_precision(const ParamValues& v) const override { return v.at("mode")[0] == 1 || v.at("split")[0] == 1; }
  std::vector<ParamSpec> params() const override {
    return {{"tile", {128, 128, 32}, 8, 512, "block tile BM x BN x BK"},
            {"warp", {64, 32}, 16, 256, "warp tile WM x WN (multiples of 16 x 8)"},
            {"stages", {3}, 2, 8, "shared-memory stages of the cp.async pipeline"},
            {"mode", {0}, 0, 1, "3xTF32 (FP32 accuracy) or 1xTF32 (TF32 accuracy, labelled so)", {"3x", "1x"}},
            {"split", {0}, 0, 1, "the big part of the 3xTF32 split: rounded to nearest or truncated",
             {"round", "truncate"}}};
  }
  const char* source() const override { return embedded::tf32_source; }
  std::string entry() const override { return "gemm_tf32"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& w = v.at("warp");
    // Accumulators, the big and small fragments of one k step, addressing.
    const int mt = w[0] / 16, ntl = w[1] / 8;
    std::vector<std::string> out;
    tiled::mma_tile_violations(out, v, 8, smem(v), mt * ntl * 4 + mt * 8 + ntl * 4 + 32);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &w = v.at("warp");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("WM", w[0]), tiled::define("WN", w[1]), tiled::define("STAGES", v.at("stages")[0]),
            tiled::define("MODE", v.at("mode")[0] == 0 ? 3 : 1), tiled::define("SPLIT", v.at("split")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return tiled::grid(p, v.at("tile")[0], v.at("tile")[1], dim3(threads(v)), smem(v));
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  // Per block and K tile: the cp.async copies of both tiles; per warp and k step of 8, MT x 4
  // fragment loads of A and NTL x 2 of B (32-bit, conflict-free by the padding).
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &w = v.at("warp");
    const int nt = threads(v), warps = nt / 32;
    const auto tl = tiled::tiling(p, t[0], t[1], t[2]);
    const double steps = tl.blocks * tl.ktiles;
    auto copies = [&](int r, int c, bool contig, bool vec) { return double(r) * c / (contig && vec ? 4 : 1) / nt; };
    KernelModel m;
    m.global_load_inst = 0;
    m.global_async_inst = steps * warps *
                          (copies(t[0], t[2], var.a_k_contig, var.a_vec) + copies(t[2], t[1], var.b_n_contig, var.b_vec));
    m.global_load_bytes = steps * 4.0 * (t[0] + t[1]) * t[2];
    m.shared_store_inst = 0;
    m.shared_load_inst = steps * warps * (t[2] / 8) * double(w[0] / 16 * 4 + w[1] / 8 * 2);
    m.shared_load_bytes = m.shared_load_inst * 32 * 4;
    tiled::add_epilogue(m, p, tl.blocks * warps * double(w[0] / 16) * (w[1] / 8) * 4);
    m.assumptions = {"edge tiles counted like interior ones"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"128x128x32", "128x256x32", "256x128x32", "128x128x16", "64x128x32"}},
                                 {"warp", {"64x64", "32x64", "64x32"}},
                                 {"stages", {"2", "3", "4"}},
                                 {"mode", {"3x"}}});
  }

 private:
  static int threads(const ParamValues& v) {
    return (v.at("tile")[0] / v.at("warp")[0]) * (v.at("tile")[1] / v.at("warp")[1]) * 32;
  }
  static long long smem(const ParamValues& v) {
    auto& t = v.at("tile");
    return 4ll * v.at("stages")[0] * (t[0] * (t[2] + 4) + t[2] * (t[1] + 8));
  }
};

}  // namespace

const KernelFamily& tf32_family() {
  static const Tf32 f;
  return f;
}

}  // namespace gemmlab
