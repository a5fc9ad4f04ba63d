#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const vectorized_source;
}

namespace gemmlab {

namespace {

class Vectorized final : public KernelFamily {
 public:
  std::string name() const override { return "vectorized"; }
  std::string description() const override {
    return "128-bit global loads, A transposed in shared memory, bank conflicts padded or swizzled away";
  }
  std::vector<ParamSpec> params() const override {
    return {{"tile", {128, 128, 8}, 4, 512, "block tile BM x BN x BK"},
            {"vpt", {8, 8}, 4, 32, "values per thread TM x TN (multiples of 4)"},
            {"conflict", {1}, 0, 2, "bank conflicts of the transposing store", {"none", "pad", "swizzle"}}};
  }
  const char* source() const override { return embedded::vectorized_source; }
  std::string entry() const override { return "gemm_vectorized"; }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    if (!tiled::vpt_divides_tile(out, v)) return out;
    tiled::kstage_violations(out, v, threads(v), 1);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("BK", t[2]),
            tiled::define("TM", r[0]), tiled::define("TN", r[1]), tiled::define("CONFLICT", v.at("conflict")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return tiled::grid(p, v.at("tile")[0], v.at("tile")[1], dim3(threads(v)), smem(v));
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto &t = v.at("tile"), &r = v.at("vpt");
    return tiled::chunked_model(p, var, t[0], t[1], t[2], r[0], r[1], threads(v), false);
  }
  std::vector<Ablation> ablations(const ParamValues&) const override {
    return {Ablation::no_store, Ablation::no_load, Ablation::no_smem_store};
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"tile", {"64x64x8", "128x64x8", "64x128x8", "128x128x8", "128x128x16"}},
                                 {"vpt", {"4x4", "8x4", "4x8", "8x8"}},
                                 {"conflict", {"none", "pad", "swizzle"}}});
  }

 private:
  static int threads(const ParamValues& v) { return tiled::grid_threads(v); }
  static long long smem(const ParamValues& v) { return tiled::kstage_smem(v, 1); }
};

}  // namespace

const KernelFamily& vectorized_family() {
  static const Vectorized f;
  return f;
}

}  // namespace gemmlab
