#include <numeric>

#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const regblock2d_source;
}

namespace gemmlab {

namespace {

auto s = [](int x) { return std::to_string(x); };

class Regblock2d final : public KernelFamily {
 public:
  std::string name() const override { return "regblock2d"; }
  std::string description() const override {
    return "seed 000: block bs_x x bs_y threads, vpt rb_x x rb_y values each, tile TILE_Y x TILE_X x TILE_K";
  }
  std::vector<ParamSpec> params() const override {
    return {{"block", {16, 16}, 1, 1024, "threads bs_x x bs_y"},
            {"vpt", {8, 8}, 1, 16, "values per thread rb_x x rb_y"},
            {"tile", {128, 128, 16}, 1, 1024, "TILE_Y x TILE_X x TILE_K (TILE_X = bs_x*rb_x, TILE_Y = bs_y*rb_y)"},
            {"placement", {0}, 0, 1, "a thread's outputs: interleaved (strided) or lumped (contiguous)",
             {"interleaved", "lumped"}}};
  }
  const char* source() const override { return embedded::regblock2d_source; }
  std::string entry() const override { return "gemm_regblock2d"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto &b = v.at("block"), &r = v.at("vpt"), &t = v.at("tile");
    std::vector<std::string> out;
    if (t[1] != b[0] * r[0])
      out.push_back("tile.x " + s(t[1]) + " is not block.x x vpt.x = " + s(b[0] * r[0]));
    if (t[0] != b[1] * r[1])
      out.push_back("tile.y " + s(t[0]) + " is not block.y x vpt.y = " + s(b[1] * r[1]));
    int threads = b[0] * b[1];
    if (threads > kMaxThreadsPerBlock)
      out.push_back("block " + s(b[0]) + "x" + s(b[1]) + " has " + s(threads) + " threads, over the limit of 1024");
    long long smem = 4ll * (t[0] * t[2] + t[2] * t[1]);
    if (smem > kStaticSharedLimit)
      out.push_back("needs " + s(int((smem + 1023) / 1024)) + " KB of static shared memory, over 48 KB");
    int regs = r[0] * r[1] + r[0] + r[1] + 24;
    if (auto e = register_violation(regs); !e.empty())
      out.push_back(e);
    else if (regs * threads > 65536)
      out.push_back("needs about " + s(regs * threads) + " registers per block, over the 65536 of an SM");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto &b = v.at("block"), &r = v.at("vpt"), &t = v.at("tile");
    return {tiled::define("BX", b[0]), tiled::define("BY", b[1]), tiled::define("VX", r[0]),
            tiled::define("VY", r[1]), tiled::define("TY", t[0]), tiled::define("TX", t[1]),
            tiled::define("TK", t[2]), tiled::define("PLACEMENT", v.at("placement")[0])};
  }
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto &b = v.at("block"), &t = v.at("tile");
    return tiled::grid(p, t[0], t[1], dim3(b[0], b[1]), 0);
  }
  std::string unsupported(const ParamValues& v, const Problem& p) const override {
    return tiled::grid_limit(p, v.at("tile")[0]);
  }
  // Seed 000's grid: block sizes 8x8 to 32x32 against 1 to 144 values per thread.
  // Per block and K tile: the element-wise loads of both tiles (one LDG and one STS each), then
  // per thread VY rows of A read along k and VX columns of B per k. The compiler merges a
  // thread's consecutive shared reads into 128-bit loads where the offset allows: A's rows along
  // the unrolled k, and with lumped placement B's VX adjacent columns.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    auto &b = v.at("block"), &r = v.at("vpt"), &t = v.at("tile");
    const int nt = b[0] * b[1];
    const auto tl = tiled::tiling(p, t[0], t[1], t[2]);
    const double steps = tl.blocks * tl.ktiles;
    const double loads = tiled::strided_warp_inst(t[0] * t[2], nt) + tiled::strided_warp_inst(t[2] * t[1], nt);
    const bool lumped = v.at("placement")[0] == 1;
    const int b_reads = lumped ? tiled::merged_loads(r[0], std::gcd(t[1], r[0])) : r[0];
    KernelModel m;
    m.global_load_inst = steps * loads;
    m.global_load_bytes = steps * 4.0 * (t[0] + t[1]) * t[2];
    m.shared_store_inst = steps * loads;
    m.shared_load_inst = steps * tiled::warps_of(nt) * double(r[1] * tiled::merged_loads(t[2], t[2]) + t[2] * b_reads);
    m.shared_load_bytes = steps * nt * 4.0 * t[2] * (r[0] + r[1]);
    tiled::add_epilogue(m, p, tl.blocks * tiled::warps_of(nt) * double(r[0]) * r[1]);
    m.assumptions = {"guarded loads are predicated: edge tiles issue as many as interior ones"};
    return m;
  }
  std::vector<Ablation> ablations(const ParamValues&) const override { return {Ablation::no_store, Ablation::no_load}; }
  std::vector<std::string> search_space() const override {
    std::vector<std::string> out;
    for (auto [bx, by] : {std::pair{8, 8}, {16, 8}, {16, 16}, {32, 16}, {32, 32}})
      for (int r : {1, 2, 4, 6, 8, 10, 12})
        for (const char* place : {"interleaved", "lumped"}) {
          std::string p = "block=" + s(bx) + "x" + s(by) + ",vpt=" + s(r) + "x" + s(r) + ",tile=" + s(by * r) + "x" +
                          s(bx * r) + "x16,placement=" + place;
          if (accepts(*this, p)) out.push_back(p);
        }
    return out;
  }

};

}  // namespace

const KernelFamily& regblock2d_family() {
  static const Regblock2d f;
  return f;
}

}  // namespace gemmlab
