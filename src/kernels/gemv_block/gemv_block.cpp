#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_block_source;
}

namespace gemmlab {

namespace {

class GemvBlock final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-block"; }
  std::string description() const override {
    return "one block per output, 16-byte loads, two-stage (shuffle + shared memory) reduction; short wide matrices";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"threads", {256}, 32, 1024, "threads per block (whole warps)"},
            {"unroll", {4}, 1, 16, "16-byte loads in flight per thread"}};
  }
  const char* source() const override { return embedded::gemv_block_source; }
  std::string entry() const override { return "gemv_block"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    gemv::require_threads(out, v.at("threads")[0]);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("THREADS", v.at("threads")[0]), gemv::define("UNROLL", v.at("unroll")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return {dim3(unsigned(p.m)), dim3(v.at("threads")[0]), 0};
  }
  std::string unsupported(const ParamValues&, const Problem& p) const override { return gemv::needs_rows(p); }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"64", "128", "256", "512", "1024"}}, {"unroll", {"1", "2", "4", "8"}}});
  }
};

}  // namespace

const KernelFamily& gemv_block_family() {
  static const GemvBlock f;
  return f;
}

}  // namespace gemmlab
