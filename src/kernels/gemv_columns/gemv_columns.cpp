#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_columns_source;
}

namespace gemmlab {

namespace {

class GemvColumns final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-columns"; }
  std::string description() const override {
    return "column-major A or transposed row-major A: coalesced (16-byte) loads across outputs, split reduction";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"block", {32, 8}, 1, 1024, "threads TX (outputs) x TY (slices of the reduction)"},
            {"vpt", {4}, 1, 16, "outputs per thread (16-byte loads when a multiple of 4 and aligned)"},
            {"unroll", {4}, 1, 16, "reduction steps unrolled per thread"},
            {"splits", {0}, 0, 1024, "blocks sharing one output's reduction; 0: one full wave of blocks"},
            gemv::accum_param()};
  }
  const char* source() const override { return embedded::gemv_columns_source; }
  std::string entry() const override { return "gemv_columns"; }
  // One split adds in the block: no counters (the library's plan without workspace).
  long long workspace_counters(const ParamValues& v, const Problem& p) const override {
    return v.at("splits")[0] == 1 ? 0 : out_blocks(v, p);
  }
  bool uses_variant() const override { return true; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    auto& b = v.at("block");
    gemv::require_threads(out, b[0] * b[1]);
    int vpt = v.at("vpt")[0];
    if (vpt > 4 && vpt % 4 != 0) out.push_back("vpt = " + std::to_string(vpt) + " above 4 must be a multiple of 4");
    long long smem = (v.at("accum")[0] ? 8LL : 4LL) * b[0] * b[1] * vpt;
    if (smem > kStaticSharedLimit)
      out.push_back("the partial sums need " + std::to_string(smem / 1024) + " KB of static shared memory, over 48 KB");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto& b = v.at("block");
    return {gemv::define("TX", b[0]), gemv::define("TY", b[1]), gemv::define("VPT", v.at("vpt")[0]),
            gemv::define("UNROLL", v.at("unroll")[0]), gemv::define("ACCUM", v.at("accum")[0])};
  }
  // Each split keeps at least 16 reduction steps per thread row.
  int splits(const ParamValues& v, const Problem& p, int resident_blocks) const override {
    return gemv::wave_splits(v.at("splits")[0], out_blocks(v, p), p.k, 16LL * v.at("block")[1], resident_blocks);
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& b = v.at("block");
    return {dim3(unsigned(out_blocks(v, p))), dim3(b[0], b[1]), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    if (auto why = gemv::needs_columns(p); !why.empty()) return why;
    return gemv::grid_limit(p.m, outputs_per_block(v));
  }
  // Each thread owns VPT outputs and walks its slice of the reduction: per step one float of x
  // and VPT of A (16-byte loads when aligned), then the block sums its TY partial rows in shared
  // memory. With splits, partial sums go to the workspace and the last block adds them.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    auto& b = v.at("block");
    const int vpt = v.at("vpt")[0], threads = b[0] * b[1];
    const bool vec = var.a_vec && vpt % 4 == 0;
    const int splits = this->splits(v, p, 0);
    const double blocks = double(out_blocks(v, p)) * splits;
    const long long chunk = (p.k + splits - 1) / splits;
    const double steps = double((chunk + b[1] - 1) / b[1]);
    const double warps = tiled::warps_of(threads);
    auto m = gemv::base_model();
    m.global_load_inst = blocks * warps * steps * (1 + (vec ? vpt / 4 : vpt));
    m.global_load_bytes = 4.0 * double(p.m) * double(p.k) + 4.0 * blocks * threads * double(chunk) / b[1];
    m.shared_store_inst = blocks * warps * vpt;
    m.shared_load_inst = blocks * tiled::strided_warp_inst(b[0] * vpt, threads) * b[1];
    m.shared_load_bytes = 4.0 * blocks * b[0] * vpt * b[1];
    tiled::add_epilogue(m, p, double(out_blocks(v, p)) * tiled::strided_warp_inst(b[0] * vpt, threads));
    m.assumptions = {"edge blocks counted like full ones", "split reductions: workspace traffic not counted"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"block", {"32x4", "32x8", "32x16", "64x4", "128x4", "8x128"}},
                                 {"vpt", {"1", "4", "8"}},
                                 {"unroll", {"1", "4"}},
                                 {"splits", {"0", "1"}}});
  }

 private:
  static long long outputs_per_block(const ParamValues& v) { return 1LL * v.at("block")[0] * v.at("vpt")[0]; }
  static long long out_blocks(const ParamValues& v, const Problem& p) {
    return (p.m + outputs_per_block(v) - 1) / outputs_per_block(v);
  }
};

}  // namespace

const KernelFamily& gemv_columns_family() {
  static const GemvColumns f;
  return f;
}

}  // namespace gemmlab
