#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const coalesced_source;
}

namespace gemmlab {

namespace {

class Coalesced final : public KernelFamily {
 public:
  std::string name() const override { return "coalesced"; }
  std::string description() const override {
    return "one thread per element of C; threadIdx.x walks columns, so B and C accesses coalesce";
  }
  std::vector<ParamSpec> params() const override {
    return {{"block", {32, 8}, 1, 1024, "threads per block, x (columns of C) × y (rows of C)"}};
  }
  const char* source() const override { return embedded::coalesced_source; }
  std::string entry() const override { return "gemm_coalesced"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& b = v.at("block");
    if (b[0] * b[1] > kMaxThreadsPerBlock)
      return {"block " + std::to_string(b[0]) + "x" + std::to_string(b[1]) + " has " + std::to_string(b[0] * b[1]) +
              " threads, over the limit of 1024"};
    return {};
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {tiled::define("BLOCK_X", v.at("block")[0]), tiled::define("BLOCK_Y", v.at("block")[1])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& b = v.at("block");
    return tiled::grid(p, b[1], b[0], dim3(b[0], b[1]), 0);
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("block")[1]);
  }
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    return tiled::direct_model(p, geometry(v, p));
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"block", {"32x1", "32x4", "32x8", "32x16", "32x32", "64x4", "128x2", "16x16"}}});
  }
};

}  // namespace

const KernelFamily& coalesced_family() {
  static const Coalesced f;
  return f;
}

}  // namespace gemmlab
