#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_vectorized_source;
}

namespace gemmlab {

namespace {

class GemvVectorized final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-vectorized"; }
  std::string description() const override {
    return "16-byte streaming loads of contiguous rows, several rows per warp, shuffle reduction";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"warps", {4}, 1, 32, "warps per block"},
            {"rows", {1}, 1, 32, "rows per warp (power of two), each on 32/rows lanes"},
            {"unroll", {4}, 1, 16, "16-byte loads in flight per lane"},
            gemv::accum_param()};
  }
  const char* source() const override { return embedded::gemv_vectorized_source; }
  std::string entry() const override { return "gemv_vectorized"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    gemv::require_power_of_two(out, "rows", v.at("rows")[0]);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("WARPS", v.at("warps")[0]), gemv::define("ROWS", v.at("rows")[0]),
            gemv::define("UNROLL", v.at("unroll")[0]), gemv::define("ACCUM", v.at("accum")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    return {dim3(gemv::blocks(p.m, rows_per_block(v))), dim3(32 * v.at("warps")[0]), 0};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    if (auto why = gemv::needs_rows(p); !why.empty()) return why;
    return gemv::grid_limit(p.m, rows_per_block(v));
  }
  // ROWS rows per warp, each on 32/ROWS lanes: dot_row's 16-byte loads of A and x.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant& var) const override {
    const int rows = v.at("rows")[0];
    const double warps = double((p.m + rows - 1) / rows);
    auto m = gemv::base_model();
    m.global_load_inst = warps * gemv::dot_row_loads(p.k, 32 / rows, v.at("unroll")[0], 0, var.b_vec);
    m.global_load_bytes = 8.0 * double(p.m) * double(p.k);
    tiled::add_epilogue(m, p, warps);
    m.assumptions = {"rows start 16-byte aligned (lda a multiple of 4)"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"warps", {"2", "4", "8", "16"}},
                                 {"rows", {"1", "2", "4", "8"}},
                                 {"unroll", {"1", "2", "4", "8"}}});
  }

 private:
  static long long rows_per_block(const ParamValues& v) { return v.at("warps")[0] * v.at("rows")[0]; }
};

}  // namespace

const KernelFamily& gemv_vectorized_family() {
  static const GemvVectorized f;
  return f;
}

}  // namespace gemmlab
