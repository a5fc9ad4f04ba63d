#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const smem_tiled_source;
}

namespace gemmlab {

namespace {

class SmemTiled final : public KernelFamily {
 public:
  std::string name() const override { return "smem-tiled"; }
  std::string description() const override {
    return "square TILE x TILE shared-memory tiles, zero-padded at the edges (seed 001)";
  }
  std::vector<ParamSpec> params() const override { return {{"tile", {32}, 8, 32, "tile edge; block = tile x tile"}}; }
  const char* source() const override { return embedded::smem_tiled_source; }
  std::string entry() const override { return "gemm_smem_tiled"; }
  std::vector<std::string> violations(const ParamValues&) const override { return {}; }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {tiled::define("TILE", v.at("tile")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    int t = v.at("tile")[0];
    return tiled::grid(p, t, t, dim3(t, t), 0);
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  // Per K tile each thread loads and stores one element of each tile, then reads its row of A
  // along k (merged into 128-bit loads) and its column of B one float per k.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    const int t = v.at("tile")[0];
    const auto tl = tiled::tiling(p, t, t, t);
    const double warp_steps = tl.blocks * tl.ktiles * tiled::warps_of(t * t);
    KernelModel m;
    m.global_load_inst = 2 * warp_steps;
    m.global_load_bytes = tl.blocks * tl.ktiles * 8.0 * t * t;
    m.shared_store_inst = 2 * warp_steps;
    m.shared_load_inst = warp_steps * double(tiled::merged_loads(t, t) + t);
    m.shared_load_bytes = tl.blocks * tl.ktiles * t * t * 8.0 * t;
    tiled::add_epilogue(m, p, tl.blocks * tiled::warps_of(t * t));
    m.assumptions = {"guarded loads are predicated: edge tiles issue as many as interior ones"};
    return m;
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store, Ablation::no_load}; }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"8", "12", "16", "24", "32"}}});
  }
};

}  // namespace

const KernelFamily& smem_tiled_family() {
  static const SmemTiled f;
  return f;
}

}  // namespace gemmlab
