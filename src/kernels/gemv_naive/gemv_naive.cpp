#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_naive_source;
}

namespace gemmlab {

namespace {

class GemvNaive final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-naive"; }
  std::string description() const override {
    return "blocks x threads set by the configuration, each thread a contiguous run of outputs (seed 002 parts 0-1)";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"threads", {256}, 1, 1024, "threads per block"},
            {"blocks", {0}, 0, 1 << 24, "blocks in the grid; 0: enough for one output per thread"}};
  }
  const char* source() const override { return embedded::gemv_naive_source; }
  std::string entry() const override { return "gemv_naive"; }
  std::vector<std::string> violations(const ParamValues&) const override { return {}; }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("THREADS", v.at("threads")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    int threads = v.at("threads")[0], blocks = v.at("blocks")[0];
    return {dim3(blocks ? unsigned(blocks) : gemv::blocks(p.m, threads)), dim3(threads), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return gemv::grid_limit(p.m, v.at("threads")[0]);
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"32", "64", "128", "256", "455", "512", "1024"}},
                                 {"blocks", {"0", "22", "132", "264", "528", "1056"}}});
  }
};

}  // namespace

const KernelFamily& gemv_naive_family() {
  static const GemvNaive f;
  return f;
}

}  // namespace gemmlab
