#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const pipelined_source;
}

namespace gemmlab {

namespace {

class Pipelined final : public KernelFamily {
 public:
  std::string name() const override { return "pipelined"; }
  std::string description() const override {
    return "seed 003's latency hiding: register prefetch with a shared double buffer, or cp.async stages";
  }
  int min_arch() const override { return 80; }  // cp.async
  std::vector<ParamSpec> params() const override {
    return {{"tile", {128, 128, 16}, 4, 512, "block tile BM x BN x BK"},
            {"vpt", {8, 8}, 4, 32, "values per thread TM x TN (multiples of 4)"},
            {"mode", {1}, 0, 1, "how the next tile is fetched", {"regprefetch", "cpasync"}},
            {"stages", {3}, 2, 8, "shared-memory stages (cpasync mode; regprefetch uses 2)"},
            {"conflict", {1}, 0, 2, "bank conflicts of the transposing store", {"none", "pad", "swizzle"}},
            {"fragments", {1}, 0, 1, "register fragments of the k steps (cpasync mode)", {"single", "double"}}};
  }
  const char* source() const override { return embedded::pipelined_source; }
  std::string entry() const override { return "gemm_pipelined"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    if (!tiled::vpt_divides_tile(out, v)) return out;
    tiled::kstage_violations(out, v, threads(v), stages(v));
    if (v.at("mode")[0] == 0 && v.at("stages")[0] != 2 && v.at("stages")[0] != 3)
      out.push_back("regprefetch mode double-buffers: stages does not apply (leave it at its default)");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    return {tiled::define("BM", t[0]),         tiled::define("BN", t[1]),
            tiled::define("BK", t[2]),         tiled::define("TM", r[0]),
            tiled::define("TN", r[1]),         tiled::define("MODE", v.at("mode")[0]),
            tiled::define("STAGES", stages(v)), tiled::define("CONFLICT", v.at("conflict")[0]),
            tiled::define("FRAGS", v.at("fragments")[0] + 1)};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return tiled::grid(p, v.at("tile")[0], v.at("tile")[1], dim3(threads(v)), smem(v));
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    return tiled::chunked_model(p, var, t[0], t[1], t[2], r[0], r[1], threads(v), v.at("mode")[0] == 1);
  }
  // cp.async copies global memory straight to shared memory: no separate shared store to leave out.
  std::vector<Ablation> ablations(const ParamValues& v) const override {
    if (v.at("mode")[0] == 1) return {Ablation::no_store, Ablation::no_load};
    return {Ablation::no_store, Ablation::no_load, Ablation::no_smem_store};
  }
  std::vector<std::string> search_space() const override {
    auto space = product_space(*this, {{"tile", {"128x128x8", "128x128x16", "128x64x16", "64x128x16"}},
                                       {"vpt", {"8x8", "8x4"}},
                                       {"mode", {"cpasync"}},
                                       {"stages", {"2", "3", "4"}},
                                       {"conflict", {"pad", "swizzle"}}});
    auto regs = product_space(*this, {{"tile", {"128x128x8", "128x128x16", "128x64x16"}},
                                      {"vpt", {"8x8", "8x4"}},
                                      {"mode", {"regprefetch"}},
                                      {"conflict", {"pad", "swizzle"}}});
    space.insert(space.end(), regs.begin(), regs.end());
    return space;
  }

 private:
  static int stages(const ParamValues& v) { return v.at("mode")[0] == 0 ? 2 : v.at("stages")[0]; }
  static int threads(const ParamValues& v) { return tiled::grid_threads(v); }
  static long long smem(const ParamValues& v) { return tiled::kstage_smem(v, stages(v)); }
};

}  // namespace

const KernelFamily& pipelined_family() {
  static const Pipelined f;
  return f;
}

}  // namespace gemmlab
