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
            {"unroll", {4}, 1, 16, "16-byte loads in flight per thread"},
            {"splits", {0}, 0, 1024, "blocks sharing one row's reduction; 0: one full wave of blocks"},
            gemv::accum_param()};
  }
  const char* source() const override { return embedded::gemv_block_source; }
  std::string entry() const override { return "gemv_block"; }
  // One split adds in the block: no counters (the library's plan without workspace).
  long long workspace_counters(const ParamValues& v, const Problem& p) const override {
    return v.at("splits")[0] == 1 ? 0 : p.m;
  }
  // Each split keeps at least one unrolled round of 16-byte loads per thread.
  int splits(const ParamValues& v, const Problem& p, int resident_blocks) const override {
    return gemv::wave_splits(v.at("splits")[0], p.m, p.k, 4LL * v.at("threads")[0] * v.at("unroll")[0],
                             resident_blocks);
  }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    gemv::require_threads(out, v.at("threads")[0]);
    // ptxas unrolls fp64tile's loop of independent FP32 groups, and 64 registers (1024 threads, one
    // block an SM) spill its loads in flight.
    if (v.at("threads")[0] >= 1024 && v.at("accum")[0] == 2)
      out.push_back("accum=fp64tile needs fewer than 1024 threads: at 64 registers a thread its unrolled loads spill");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("THREADS", v.at("threads")[0]), gemv::define("UNROLL", v.at("unroll")[0]),
            gemv::define("ACCUM", v.at("accum")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return {dim3(unsigned(p.m)), dim3(v.at("threads")[0]), 0};  // gridDim.z: the splits, set by the launcher
  }
  std::string unsupported(const ParamValues&, const Problem& p) const override { return gemv::needs_rows(p); }
  // One block per output (and split): dot_row over THREADS lanes, then a shuffle and shared-memory
  // reduction.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    const int threads = v.at("threads")[0], unroll = v.at("unroll")[0];
    const int splits = this->splits(v, p, 0);
    const long long chunk = ((p.k + splits - 1) / splits + 3) / 4 * 4;
    double per_row = 0;
    for (long long p0 = 0; p0 < p.k; p0 += chunk)
      for (int lane = 0; lane < threads; lane += 32)
        per_row += gemv::dot_row_loads(std::min(chunk, p.k - p0), threads, unroll, lane, var.b_vec);
    auto m = gemv::base_model();
    m.global_load_inst = double(p.m) * per_row;
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    if (threads > 32) {  // block_sum: every warp stores its sum, every warp reads the 32 slots back
      m.shared_store_inst = double(p.m) * splits * (threads / 32);
      m.shared_load_inst = double(p.m) * splits * (threads / 32);
      m.shared_load_bytes = 4.0 * double(p.m) * splits * threads;
    }
    tiled::add_epilogue(m, p, double(p.m));
    m.assumptions = {"rows start 16-byte aligned (lda a multiple of 4)"};
    if (splits > 1) m.assumptions.push_back("split reductions: workspace traffic not counted");
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"64", "128", "256", "512", "1024"}}, {"unroll", {"1", "2", "4", "8"}}, {"splits", {"0", "1"}}});
  }
};

}  // namespace

const KernelFamily& gemv_block_family() {
  static const GemvBlock f;
  return f;
}

}  // namespace gemmlab
