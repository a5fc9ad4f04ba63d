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
  // One block per output: dot_row over THREADS lanes, then a shuffle and shared-memory reduction.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    const int threads = v.at("threads")[0], unroll = v.at("unroll")[0];
    double per_row = 0;
    for (int lane = 0; lane < threads; lane += 32) per_row += gemv::dot_row_loads(p.k, threads, unroll, lane, var.b_vec);
    auto m = gemv::base_model();
    m.global_load_inst = double(p.m) * per_row;
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    if (threads > 32) {  // block_sum: every warp stores its sum, every warp reads the 32 slots back
      m.shared_store_inst = double(p.m) * (threads / 32);
      m.shared_load_inst = double(p.m) * (threads / 32);
      m.shared_load_bytes = 4.0 * double(p.m) * threads;
    }
    tiled::add_epilogue(m, p, double(p.m));
    m.assumptions = {"rows start 16-byte aligned (lda a multiple of 4)"};
    return m;
  }
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
