#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_warp_source;
}

namespace gemmlab {

namespace {

class GemvWarp final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-warp"; }
  std::string description() const override { return "one warp per output, 4-byte loads, warp-shuffle reduction"; }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override { return {{"warps", {4}, 1, 32, "warps per block, one output each"}}; }
  const char* source() const override { return embedded::gemv_warp_source; }
  std::string entry() const override { return "gemv_warp"; }
  std::vector<std::string> violations(const ParamValues&) const override { return {}; }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("WARPS", v.at("warps")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    int warps = v.at("warps")[0];
    return {dim3(gemv::blocks(p.m, warps)), dim3(32 * warps), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return gemv::grid_limit(p.m, v.at("warps")[0]);
  }
  // One warp per output: its lanes stride the row 32 floats at a time, one float of A and x each.
  KernelModel model(const ParamValues&, const Problem& p, const Variant&) const override {
    auto m = gemv::base_model();
    m.global_load_inst = double(p.m) * 2 * double((p.k + 31) / 32);
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    tiled::add_epilogue(m, p, double(p.m));
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"warps", {"1", "2", "4", "8", "16", "32"}}});
  }
};

}  // namespace

const KernelFamily& gemv_warp_family() {
  static const GemvWarp f;
  return f;
}

}  // namespace gemmlab
