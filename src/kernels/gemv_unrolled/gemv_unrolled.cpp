#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_unrolled_source;
}

namespace gemmlab {

namespace {

class GemvUnrolled final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-unrolled"; }
  std::string description() const override {
    return "one thread per output, dot product unrolled into registers, optional register cap (seed 002 part 3)";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"threads", {256}, 32, 1024, "threads per block, one output each"},
            {"unroll", {4}, 1, 32, "independent accumulators (and loads in flight) per thread"},
            {"maxreg", {0}, 0, 255, "register cap per thread (__maxnreg__, like -maxrregcount); 0: none"}};
  }
  const char* source() const override { return embedded::gemv_unrolled_source; }
  std::string entry() const override { return "gemv_unrolled"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    int cap = v.at("maxreg")[0];
    if (cap > 0 && cap < 16) out.push_back("maxreg = " + std::to_string(cap) + " is below 16, the least ptxas accepts");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("THREADS", v.at("threads")[0]), gemv::define("UNROLL", v.at("unroll")[0]),
            gemv::define("MAXREG", v.at("maxreg")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    int threads = v.at("threads")[0];
    return {dim3(gemv::blocks(p.m, threads)), dim3(threads), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return gemv::grid_limit(p.m, v.at("threads")[0]);
  }
  // One output per thread: one float of A and one of x per k, UNROLL of them in flight.
  KernelModel model(const ParamValues&, const Problem& p, const Variant&) const override {
    const double warps = double((p.m + 31) / 32);
    auto m = gemv::base_model();
    m.global_load_inst = warps * 2 * double(p.k);
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    tiled::add_epilogue(m, p, warps);
    m.assumptions = {"x's loads are not merged (its alignment is unknown at compile time)"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"128", "256", "512"}},
                                 {"unroll", {"1", "4", "8", "16", "32"}},
                                 {"maxreg", {"0", "16", "32"}}});
  }
};

}  // namespace

const KernelFamily& gemv_unrolled_family() {
  static const GemvUnrolled f;
  return f;
}

}  // namespace gemmlab
