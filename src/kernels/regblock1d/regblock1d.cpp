#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const regblock1d_source;
}

namespace gemmlab {

namespace {

class Regblock1d final : public KernelFamily {
 public:
  std::string name() const override { return "regblock1d"; }
  std::string description() const override { return "shared-memory tile BM x BN x BK; each thread a strip of TM values"; }
  std::vector<ParamSpec> params() const override {
    return {{"tile", {64, 64, 8}, 1, 512, "block tile BM x BN x BK"}, {"tm", {8}, 1, 64, "values per thread (rows)"}};
  }
  const char* source() const override { return embedded::regblock1d_source; }
  std::string entry() const override { return "gemm_regblock1d"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& t = v.at("tile");
    int tm = v.at("tm")[0];
    auto s = [](int x) { return std::to_string(x); };
    std::vector<std::string> out;
    if (t[0] % tm) out.push_back("tile.m " + s(t[0]) + " is not a multiple of tm = " + s(tm));
    int threads = t[0] * t[1] / tm;
    if (threads > kMaxThreadsPerBlock || threads < 1)
      out.push_back(s(threads) + " threads per block (tile.m x tile.n / tm), over the limit of 1024");
    long long smem = 4ll * (t[0] * t[2] + t[2] * t[1]);
    if (smem > kStaticSharedLimit)
      out.push_back("needs " + s(int((smem + 1023) / 1024)) + " KB of static shared memory, over 48 KB");
    if (auto r = register_violation(tm + 24); !r.empty()) out.push_back(r);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto& t = v.at("tile");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("TM", v.at("tm")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& t = v.at("tile");
    return tiled::grid(p, t[0], t[1], dim3(t[0] * t[1] / v.at("tm")[0]), 0);
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  // Per K tile: element-wise tile loads (one LDG and one STS each); per thread one B value per k
  // and TM rows of A read along k (merged into 128-bit loads).
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    auto& t = v.at("tile");
    const int tm = v.at("tm")[0], nt = t[0] * t[1] / tm;
    const auto tl = tiled::tiling(p, t[0], t[1], t[2]);
    const double steps = tl.blocks * tl.ktiles;
    const double loads = tiled::strided_warp_inst(t[0] * t[2], nt) + tiled::strided_warp_inst(t[2] * t[1], nt);
    KernelModel m;
    m.global_load_inst = steps * loads;
    m.global_load_bytes = steps * 4.0 * (t[0] + t[1]) * t[2];
    m.shared_store_inst = steps * loads;
    m.shared_load_inst = steps * tiled::warps_of(nt) * double(t[2] + tm * tiled::merged_loads(t[2], t[2]));
    m.shared_load_bytes = steps * nt * 4.0 * t[2] * (1 + tm);
    tiled::add_epilogue(m, p, tl.blocks * tiled::warps_of(nt) * double(tm));
    m.assumptions = {"guarded loads are predicated: edge tiles issue as many as interior ones"};
    return m;
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store, Ablation::no_load}; }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"32x32x8", "64x64x8", "64x64x16", "128x64x8", "64x128x8", "128x128x8"}},
                                 {"tm", {"4", "8", "16", "32"}}});
  }
};

}  // namespace

const KernelFamily& regblock1d_family() {
  static const Regblock1d f;
  return f;
}

}  // namespace gemmlab
