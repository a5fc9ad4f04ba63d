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
  // Each thread walks its run of rows, one float of A and one of x per k (run-time strides and an
  // x of unknown alignment: nothing merges).
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    const auto g = geometry(v, p);
    const long long threads = (long long)g.grid.x * g.block.x;
    const long long per_thread = (p.m + threads - 1) / threads;
    const double warps = double(((p.m + per_thread - 1) / per_thread + 31) / 32);
    auto m = gemv::base_model();
    m.global_load_inst = warps * double(per_thread) * 2 * double(p.k);
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    tiled::add_epilogue(m, p, warps * double(per_thread));
    m.assumptions = {"every warp with an output runs as many rows as its first thread"};
    return m;
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
