#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const wgmma_source;
}

namespace gemmlab {

namespace {

auto s = [](int x) { return std::to_string(x); };

class Wgmma final : public tiled::TailFamily {
 public:
  std::string name() const override { return "wgmma"; }
  std::string description() const override {
    return "Hopper tensor cores (wgmma m64nNk8 TF32, TMA, mbarrier pipeline, warp-specialised, persistent): "
           "3xTF32 (FP32-accurate) or 1xTF32 (lower precision)";
  }
  int min_arch() const override { return 90; }
  bool arch_specific() const override { return true; }
  // accum=tc sums all of K in the tensor cores, whose round-toward-zero addition makes the error
  // grow with K (measured: 1.7e-4 relative for all-positive inputs at K = 16384, over the FP32
  // tolerance from K = 1024): TF32-class, like 1x and the truncated split.
  bool lower_precision(const ParamValues& v) const override {
    return v.at("mode")[0] == 1 || v.at("split")[0] == 1 || v.at("accum")[0] == 1;
  }
  std::vector<ParamSpec> params() const override {
    // Defaults: the fastest FP32-accurate configuration measured on an H100 (perf-log entry 15).
    std::vector<ParamSpec> out = {
        {"tile", {128, 256, 32}, 8, 256, "block tile BM x BN x BK (BK 32, 16 or 8: one 128, 64 or 32-byte swizzle row)"},
        {"consumers", {2}, 1, 2, "consumer warpgroups; each owns BM / consumers rows (a multiple of 64)"},
        {"stages", {2}, 2, 8, "shared-memory slots of the TMA pipeline"},
        {"mode", {0}, 0, 1, "3xTF32 (FP32 accuracy) or 1xTF32 (TF32 accuracy, labelled so)", {"3x", "1x"}},
        {"split", {0}, 0, 1, "the big part of the 3xTF32 split: rounded to nearest or truncated",
         {"round", "truncate"}},
        {"accum", {0}, 0, 2,
         "tile: the products of `flush` K tiles summed in a fresh fragment, then added in FP32; tc: all of K "
         "summed in the tensor cores (fewer registers; their round-toward-zero addition grows the error with "
         "K: lower precision); kstep: a fresh fragment per k step of 8 (the tensor cores' truncating sums "
         "cover 8 products each), a K tile's fragments summed in FP32 and added to the accumulator with "
         "compensation (more waits, twice the registers: 128x128 tiles with slices=2)",
         {"tile", "tc", "kstep"}},
        {"flush", {1}, 1, 64, "accum=tile: K tiles whose products share one fresh fragment"},
        {"slices", {2}, 1, 4,
         "accum=tile or kstep: the fresh fragment covers BN / slices columns, one slice after another (tc "
         "ignores it)"},
        {"order", {2}, 0, 2,
         "the 3xTF32 products per k step: corrections first, or big·big first; or a K tile's corrections all "
         "before its big·big products",
         {"small-first", "big-first", "corrections-first"}},
        {"group", {8}, 1, 64, "tile rows per band of the persistent tile order (L2 reuse)"},
        {"prepass", {1}, 0, 1,
         "1x: pack every operand (rounded to TF32), or only those not already K-major (the others are read in "
         "place, truncated to TF32 by the tensor cores); 3x always packs (the split)",
         {"always", "layout"}},
        {"cluster", {1}, 1, 2,
         "blocks per cluster: vertically adjacent tiles whose B tile is loaded once and multicast to both"},
        {"split_a", {0}, 0, 1,
         "3x: op(A) split by the pre-pass into TF32 planes, or loaded as it is (in place when K-major) and split "
         "in registers, the wgmmas taking A from registers (only op(B) is packed)",
         {"prepass", "registers"}},
        {"transpose", {0}, 0, 1,
         "compute C, or Cᵀ = op(B)ᵀ·op(A)ᵀ written transposed: op(B) takes A's place (with split_a=registers "
         "split in registers, read in place when K-contiguous, only op(A) packed) and C's few rows become the "
         "tile's N: for products of few rows and a large op(B)",
         {"no", "yes"}},
        {"inflight", {1}, 1, 3,
         "accum=kstep: k steps in flight per consumer; above 1 a step's wgmmas are issued before the fragments "
         "of the inflight - 1 steps before it are added (a fragment of registers each, the same sums)"},
        {"steps", {1}, 1, 4,
         "accum=kstep: k steps (of 8) whose products the tensor cores sum in one fresh fragment (fewer waits "
         "and additions; each truncating sum covers more products)"},
        {"compensate", {1}, 0, 8,
         "accum=kstep: K tiles whose fragments are summed in FP32 before one compensated addition to the "
         "accumulator (with slices=1 above 1: the sum spans the tile's width); 0: every fragment added with "
         "compensation, no FP32 sum (its registers fit 128x128 with slices=1)"},
        {"pingpong", {0}, 0, 1,
         "accum=kstep with 2 consumers: the warpgroups issue their wgmma groups in turns (named barriers), so "
         "that one's FP32 additions run while the other's wgmmas hold the tensor cores",
         {"no", "yes"}}};
    add_tail_params(out, 128);
    return out;
  }
  const char* source() const override { return embedded::wgmma_source; }
  std::string entry() const override { return "gemm_wgmma"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& t = v.at("tile");
    const int consumers = v.at("consumers")[0];
    std::vector<std::string> out;
    if (t[2] != 32 && t[2] != 16 && t[2] != 8)
      out.push_back("tile.k " + s(t[2]) + " is not 32, 16 or 8 (one swizzle row of 128, 64 or 32 bytes)");
    if (t[0] % (64 * consumers))
      out.push_back("tile.m " + s(t[0]) + " does not give each of " + s(consumers) +
                    " consumer warpgroups a multiple of 64 rows");
    // The widths with a wgmma overload in hopper.cuh; 16 and 32 for products of few rows or columns.
    auto width = [](int n) { return n == 16 || n == 32 || n == 64 || n == 128 || n == 192 || n == 256; };
    if (!width(t[1])) out.push_back("tile.n " + s(t[1]) + " is not one of the wgmma widths 16, 32, 64, 128, 192, 256");
    if (v.at("split_a")[0] == 1 && v.at("mode")[0] == 1)
      out.push_back("split_a=registers needs mode=3x (1x has no small part to split)");
    if (v.at("splitk")[0] > 1 && v.at("cluster")[0] > 1)
      out.push_back("splitk " + s(v.at("splitk")[0]) + " needs cluster=1 (a cluster's blocks share whole tiles)");
    if (stream(v) && v.at("cluster")[0] > 1)
      out.push_back("tail=stream needs cluster=1 (a cluster's blocks share whole tiles)");
    tail_violations(out, v);
    const int accum = v.at("accum")[0];
    if (const int sl = v.at("slices")[0]; sl > 1 && accum != 1) {  // accum=tc has no fragment
      if (t[1] % sl || !width(t[1] / sl))
        out.push_back("tile.n " + s(t[1]) + " / slices " + s(sl) + " is not one of the wgmma widths 16, 32, 64, 128, 192, 256");
      if (accum == 0 && v.at("flush")[0] != 1)
        out.push_back("slices " + s(sl) + " needs flush=1 (one fragment serves every slice)");
    }
    if (accum == 2 && v.at("flush")[0] != 1)
      out.push_back("flush " + s(v.at("flush")[0]) + " applies to accum=tile (kstep flushes every k step)");
    for (const char* name : {"inflight", "steps", "compensate"})
      if (accum != 2 && v.at(name)[0] != 1)
        out.push_back(std::string(name) + " " + s(v.at(name)[0]) + " applies to accum=kstep");
    if (v.at("pingpong")[0] == 1 && (accum != 2 || consumers != 2))
      out.push_back("pingpong=yes needs accum=kstep and consumers=2 (two warpgroups taking turns at the tensor cores)");
    if (const int st = v.at("steps")[0]; (t[2] / 8) % st)
      out.push_back("steps " + s(st) + " does not divide the " + s(t[2] / 8) + " k steps of a K tile");
    if (v.at("compensate")[0] > 1 && v.at("slices")[0] != 1)
      out.push_back("compensate " + s(v.at("compensate")[0]) + " needs slices=1 (the FP32 sum spans the tile's width)");
    if (!out.empty()) return out;
    if (auto e = shared_memory_violation(smem(v)); !e.empty()) out.push_back(e);
    // The producer gives registers up (setmaxnreg) so that two consumers may hold 232 each (kstep:
    // 240, the producer keeping 24).
    const int limit = consumers == 2 ? (accum == 2 ? 240 : 232) : 255, regs = registers(v);
    if (regs > limit)
      out.push_back("needs about " + s(regs) + " registers per consumer thread, over " + s(limit) +
                    (v.at("accum")[0] != 1 ? " (a fresh fragment beside the accumulator: try accum=tc or a narrower tile)"
                                           : ""));
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto& t = v.at("tile");
    return {tiled::define("BM", t[0]),
            tiled::define("BN", t[1]),
            tiled::define("BK", t[2]),
            tiled::define("CONSUMERS", v.at("consumers")[0]),
            tiled::define("STAGES", v.at("stages")[0]),
            tiled::define("MODE", v.at("mode")[0] == 0 ? 3 : 1),
            tiled::define("SPLIT", v.at("split")[0]),
            tiled::define("ACCUM", v.at("accum")[0]),
            tiled::define("ORDER", v.at("order")[0]),
            tiled::define("GROUP", v.at("group")[0]),
            tiled::define("FLUSH", v.at("flush")[0]),
            tiled::define("CLUSTER", v.at("cluster")[0]),
            tiled::define("SLICES", v.at("slices")[0]),
            tiled::define("A_REGS", a_registers(v)),
            tiled::define("TRANSPOSED", v.at("transpose")[0]),
            tiled::define("INFLIGHT", v.at("inflight")[0]),
            tiled::define("FRAG_STEPS", v.at("steps")[0]),
            tiled::define("COMPENSATE", v.at("compensate")[0]),
            tiled::define("PINGPONG", v.at("pingpong")[0]),
            tiled::define("TAIL_STREAM", stream(v))};
  }
  // One block per output tile (a cluster per `cluster` tile rows), or with the stream up to one per
  // K tile, capped by the launcher at the blocks that fit at once (persistent).
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& t = v.at("tile");
    const int cl = v.at("cluster")[0];
    const long long tiles = ((p.m + t[0] * cl - 1) / (t[0] * cl)) * cl * ((p.n + t[1] - 1) / t[1]);
    const long long blocks = stream(v) ? tiles * std::max<long long>(1, (p.k + t[2] - 1) / t[2]) : tiles;
    return {dim3(unsigned(std::min<long long>(blocks, 1ll << 30))), dim3(128 * (v.at("consumers")[0] + 1)),
            size_t(smem(v))};
  }
  bool persistent(const ParamValues&) const override { return true; }
  int cluster(const ParamValues& v) const override { return v.at("cluster")[0]; }
  bool transposes(const ParamValues& v) const override { return v.at("transpose")[0] == 1; }
  Packing packing(const ParamValues& v) const override {
    auto& t = v.at("tile");
    const bool one = v.at("mode")[0] == 1;
    return {"pack_tf32", one ? 1 : 2, t[0], t[1] / v.at("cluster")[0], t[2], one && v.at("prepass")[0] == 1,
            a_registers(v)};
  }
  std::string unsupported(const ParamValues&, const Problem& p) const override {
    // TMA coordinates are 32-bit; the pre-pass's grid has one row of blocks per 32 rows.
    const long long rows = std::max(p.m, p.n);
    if (rows > (1ll << 31) - 1 || p.k > (1ll << 31) - 1) return "M, N and K must stay below 2^31 for TMA";
    if ((rows + 31) / 32 > 65535) return "max(M, N) / 32 exceeds the 65535 limit of the pre-pass's gridDim.y";
    return {};
  }
  // Per block and K tile: PARTS planes of both tiles through TMA (no load instructions); the
  // tensor cores read shared memory directly (no LDS). The pre-pass is a separate kernel.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    auto& t = v.at("tile");
    const int parts = v.at("mode")[0] == 0 ? 2 : 1, parts_a = a_registers(v) ? 1 : parts;
    const auto tl = tiled::tiling(p, t[0], t[1], t[2]);
    KernelModel m;
    m.global_load_inst = 0;
    m.global_async_inst = 0;
    // Per block and K tile, one copy per plane of A and of B (with clusters, each block's share of B).
    m.tma_load_inst = tl.blocks * tl.ktiles * double(parts_a + parts);
    m.global_load_bytes = tl.blocks * tl.ktiles * 4.0 * (parts_a * t[0] + parts * t[1]) * t[2];
    // A in registers: every consumer warp reads 4 values per m64 slice and k step (LDS.32).
    m.shared_load_inst = a_registers(v) ? tl.blocks * tl.ktiles * 4.0 * (t[0] / 16) * (t[2] / 8) : 0;
    m.shared_store_inst = 0;
    // Each consumer thread stores its fragment one float at a time.
    tiled::add_epilogue(m, p, tl.blocks * (t[0] / 64) * 4 * double(t[1] / 2));
    m.assumptions = {"edge tiles counted like interior ones", "the operand pre-pass is not counted",
                     "operands read in place (1x) count like packed ones"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    // FP32-accurate points only (accum=tc is TF32-class); BK = 16 and 3-stage 128x256 measured slower.
    return product_space(*this, {{"tile", {"128x128x32", "128x256x32", "256x128x32", "128x192x16", "128x256x16"}},
                                 {"stages", {"2", "3", "4", "5"}},
                                 {"slices", {"1", "2", "4"}},
                                 {"split_a", {"prepass", "registers"}},
                                 {"cluster", {"1", "2"}},
                                 {"accum", {"tile"}},
                                 {"mode", {"3x"}}});
  }

 private:
  static bool a_registers(const ParamValues& v) { return v.at("mode")[0] == 0 && v.at("split_a")[0] == 1; }
  static int registers(const ParamValues& v) {
    auto& t = v.at("tile");
    const int mw = t[0] / v.at("consumers")[0] / 64;
    // accum=tile: the accumulator and the fresh fragment of one slice; A in registers: the big and
    // small parts of a K tile's fragments (4 values per m64 slice and k step), live until the wait,
    // but no shared-memory descriptors of A (ptxas: 128x256x16 with slices=2 fits, x32 spills).
    // kstep adds the K tile's sum of a slice (none with compensate=0), the accumulator's compensation
    // and a fragment per step in flight.
    const int acc = mw * t[1] / 2, accum = v.at("accum")[0], slice = acc / v.at("slices")[0];
    const int a = a_registers(v) ? mw * t[2] - 16 : 0;
    const int sums = v.at("compensate")[0] > 0 ? 1 : 0;
    const int fragments = accum == 0 ? slice : accum == 2 ? (sums + v.at("inflight")[0]) * slice + acc : 0;
    return acc + fragments + a + 40;
  }
  static long long smem(const ParamValues& v) {
    auto& t = v.at("tile");
    const int parts = v.at("mode")[0] == 0 ? 2 : 1, parts_a = a_registers(v) ? 1 : parts;
    // Stages, 1024 bytes to align them to the swizzle pattern, two mbarriers per stage.
    return 4ll * v.at("stages")[0] * (parts_a * t[0] + parts * t[1]) * t[2] + 1024 + 16ll * v.at("stages")[0];
  }
};

}  // namespace

const KernelFamily& wgmma_family() {
  static const Wgmma f;
  return f;
}

}  // namespace gemmlab
