#include "kernels/family.hpp"
#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const naive_source;
}

namespace gemmlab {

namespace {

class Naive final : public KernelFamily {
 public:
  std::string name() const override { return "naive"; }
  std::string description() const override { return "one thread per element of C; threadIdx.x walks rows (uncoalesced)"; }
  std::vector<ParamSpec> params() const override {
    return {{"block", {16, 16}, 1, 1024, "threads per block, x (rows of C) × y (columns of C)"}};
  }
  const char* source() const override { return embedded::naive_source; }
  std::string entry() const override { return "gemm_naive"; }

  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    auto& b = v.at("block");
    if (b[0] * b[1] > 1024)
      out.push_back("block " + std::to_string(b[0]) + "x" + std::to_string(b[1]) + " has " +
                    std::to_string(b[0] * b[1]) + " threads, over the limit of 1024");
    return out;
  }

  std::vector<std::string> defines(const ParamValues& v) const override {
    auto& b = v.at("block");
    return {"-DBLOCK_X=" + std::to_string(b[0]), "-DBLOCK_Y=" + std::to_string(b[1])};
  }

  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& b = v.at("block");
    return {dim3(unsigned((p.m + b[0] - 1) / b[0]), unsigned((p.n + b[1] - 1) / b[1])), dim3(b[0], b[1]), 0};
  }

  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    return tiled::direct_model(p, geometry(v, p));
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"block", {"8x8", "16x16", "32x8", "32x32", "8x32"}}});
  }

  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    auto& b = v.at("block");
    if ((p.n + b[1] - 1) / b[1] > 65535) return "N / block.y exceeds the 65535 limit of gridDim.y";
    return {};
  }
};

}  // namespace

const KernelFamily& naive_family() {
  static const Naive f;
  return f;
}

}  // namespace gemmlab
