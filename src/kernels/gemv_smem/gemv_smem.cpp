#include <algorithm>

#include "kernels/gemv.hpp"

namespace gemmlab::embedded {
extern const char* const gemv_smem_source;
}

namespace gemmlab {

namespace {

class GemvSmem final : public KernelFamily {
 public:
  std::string name() const override { return "gemv-smem"; }
  std::string description() const override {
    return "one thread per output, x staged in shared memory whole or in tiles (seed 002 part 2)";
  }
  Op op() const override { return Op::gemv; }
  std::vector<ParamSpec> params() const override {
    return {{"threads", {256}, 32, 1024, "threads per block, one output each"},
            {"stage", {0}, 0, 1, "what of x is in shared memory at a time", {"whole", "tile"}},
            {"tile", {1024}, 32, 1 << 16, "elements of x per tile (stage=tile)"}};
  }
  const char* source() const override { return embedded::gemv_smem_source; }
  std::string entry() const override { return "gemv_smem"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    std::vector<std::string> out;
    if (auto why = shared_memory_violation(4LL * v.at("tile")[0]); !why.empty()) out.push_back("tile " + why);
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    return {gemv::define("THREADS", v.at("threads")[0]), gemv::define("STAGE_WHOLE", v.at("stage")[0] == 0),
            gemv::define("TILE", v.at("tile")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    int threads = v.at("threads")[0];
    // Rounded up to 16 bytes: compute-sanitizer caught the compiled remainder of the unrolled dot
    // product reading up to 3 floats past a staged x whose length is not a multiple of 4
    // (a 12-byte shared read at x[128..130] for K = 130); the padding is never used.
    return {dim3(gemv::blocks(p.m, threads)), dim3(threads), size_t(16 * ((staged(v, p) + 3) / 4))};
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    if (auto why = shared_memory_violation(4 * staged(v, p)); !why.empty())
      return "x of " + std::to_string(p.k) + " floats " + why + "; use stage=tile";
    return gemv::grid_limit(p.m, v.at("threads")[0]);
  }
  // x is staged in shared memory (one LDG and one STS per element per block), then each thread
  // reads its row of A from global memory and x from shared memory, one float per k.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    const int threads = v.at("threads")[0];
    const long long chunk = v.at("stage")[0] == 0 ? p.k : v.at("tile")[0];
    const double blocks = double(gemv::blocks(p.m, threads));
    double staging = 0;
    for (long long p0 = 0; p0 < p.k; p0 += chunk) staging += tiled::strided_warp_inst(std::min(chunk, p.k - p0), threads);
    const double warps = double((p.m + 31) / 32);
    auto m = gemv::base_model();
    m.global_load_inst = blocks * staging + warps * double(p.k);
    m.global_load_bytes = 4.0 * (blocks * double(p.k) + double(p.m) * double(p.k));
    m.shared_store_inst = blocks * staging;
    m.shared_load_inst = warps * double(p.k);
    m.shared_load_bytes = 4.0 * double(p.m) * double(p.k);
    tiled::add_epilogue(m, p, warps);
    m.assumptions = {"shared reads of x are not merged (the loop is not fully unrolled)"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    return product_space(*this, {{"threads", {"64", "128", "256", "512", "1024"}},
                                 {"stage", {"whole", "tile"}},
                                 {"tile", {"256", "1024", "4096"}}});
  }

 private:
  static long long staged(const ParamValues& v, const Problem& p) {
    return v.at("stage")[0] == 0 ? p.k : std::min<long long>(p.k, v.at("tile")[0]);
  }
};

}  // namespace

const KernelFamily& gemv_smem_family() {
  static const GemvSmem f;
  return f;
}

}  // namespace gemmlab
