#include "kernels/common/ozaki_math.cuh"
#include "kernels/tiled.hpp"

namespace gemmlab::embedded {
extern const char* const ozaki_source;
}

namespace gemmlab {

namespace {

auto s = [](int x) { return std::to_string(x); };

// Moduli for normal inputs: what the model counts on when the data are not known.
int typical_moduli(const ParamValues& v, const Problem& p) {
  if (const int n = v.at("moduli")[0]; n > 0) return n;
  return ozaki::choose_moduli(ozaki::kNormalSpread, p.k, p.m, p.n);
}

class Ozaki final : public KernelFamily {
 public:
  std::string name() const override { return "ozaki"; }
  std::string description() const override {
    return "Ozaki scheme II on Hopper's INT8 tensor cores (wgmma s8, TMA, persistent, warp-specialised): rows "
           "and columns scaled to integers, one exact INT8 product per modulus, C rebuilt by the Chinese "
           "remainder theorem in the epilogue (FP32-accurate; the number of moduli follows K and the data)";
  }
  int min_arch() const override { return 90; }
  bool arch_specific() const override { return true; }
  // Few fixed moduli trade the FP32 accuracy for speed: labelled lower precision (the automatic
  // choice meets the tensor_fp32 contract).
  bool lower_precision(const ParamValues& v) const override {
    const int n = v.at("moduli")[0];
    return n > 0 && n < 7;
  }
  std::vector<ParamSpec> params() const override {
    return {{"tile", {128, 128}, 64, 256, "block tile BM x BN (K tiles of 128 int8 values: one 128-byte swizzle row)"},
            {"consumers", {2}, 1, 2, "consumer warpgroups; each owns BM / consumers rows (a multiple of 64)"},
            {"stages", {4}, 2, 8, "shared-memory slots of the TMA pipeline"},
            {"group", {8}, 1, 64, "tile rows per band of the persistent tile order (L2 reuse)"},
            {"cluster", {2, 1}, 1, 4,
             "blocks per cluster CM x CN: CM blocks of adjacent tile rows share (multicast) their B tile, CN of "
             "adjacent tile columns their A tile (less L2 traffic per product)"},
            {"moduli", {0}, 0, ozaki::kMaxModuli,
             "moduli (INT8 products): 0 chooses per call from K and the inputs' spread to meet the contract "
             "(on the GPU, no host round trip); 2-16 fixes them (under 7: lower precision)"},
            {"pitch", {0}, 0, 1,
             "residue plane rows: odd (an odd number of 128-byte lines apart from K = 2048 on, so a tile's rows "
             "spread over the L2's sets) or tight (K rounded up to 128)",
             {"odd", "tight"}}};
  }
  const char* source() const override { return embedded::ozaki_source; }
  std::string entry() const override { return "gemm_ozaki"; }
  std::vector<std::string> violations(const ParamValues& v) const override {
    auto& t = v.at("tile");
    const int consumers = v.at("consumers")[0], moduli = v.at("moduli")[0];
    std::vector<std::string> out;
    if (t[0] % (64 * consumers))
      out.push_back("tile.m " + s(t[0]) + " does not give each of " + s(consumers) +
                    " consumer warpgroups a multiple of 64 rows");
    if (t[1] != 64 && t[1] != 128 && t[1] != 256)
      out.push_back("tile.n " + s(t[1]) + " is not one of the wgmma widths 64, 128, 256");
    auto& cl = v.at("cluster");
    if (cl[0] * cl[1] > 4) out.push_back("cluster " + s(cl[0]) + "x" + s(cl[1]) + " has over 4 blocks");
    if (t[0] % (8 * cl[1]) || t[1] % (8 * cl[0]))
      out.push_back("tile " + s(t[0]) + "x" + s(t[1]) + " does not split into cluster shares of whole 8-row groups");
    if (moduli == 1) out.push_back("moduli 1 leaves no bits (M / 2 = 128): take 0 (automatic) or 2 to 16");
    if (!out.empty()) return out;
    if (auto e = shared_memory_violation(smem(v)); !e.empty()) out.push_back(e);
    const int limit = consumers == 2 ? 232 : 255, regs = registers(v);
    if (regs > limit)
      out.push_back("needs about " + s(regs) + " registers per consumer thread (INT32 accumulators and float64 "
                    "CRT sums), over " + s(limit) + ": a narrower tile");
    return out;
  }
  std::vector<std::string> defines(const ParamValues& v) const override {
    auto& t = v.at("tile");
    return {tiled::define("BM", t[0]), tiled::define("BN", t[1]), tiled::define("CONSUMERS", v.at("consumers")[0]),
            tiled::define("STAGES", v.at("stages")[0]), tiled::define("GROUP", v.at("group")[0]),
            tiled::define("MODULI", v.at("moduli")[0]), tiled::define("CLUSTER_M", v.at("cluster")[0]),
            tiled::define("CLUSTER_N", v.at("cluster")[1])};
  }
  // One block per tile, whole clusters (capped by the launcher at the clusters that fit at once).
  LaunchGeometry geometry(const ParamValues& v, const Problem& p) const override {
    auto& t = v.at("tile");
    auto& cl = v.at("cluster");
    const long long units = ((p.m + t[0] * cl[0] - 1) / (t[0] * cl[0])) * ((p.n + t[1] * cl[1] - 1) / (t[1] * cl[1]));
    return {dim3(unsigned(std::min<long long>(units * cl[0] * cl[1], 1ll << 30))),
            dim3(128 * (v.at("consumers")[0] + 1)), size_t(smem(v))};
  }
  bool persistent(const ParamValues&) const override { return true; }
  int cluster(const ParamValues& v) const override { return v.at("cluster")[0] * v.at("cluster")[1]; }
  // The planes of every modulus the call may choose, op(A)'s and op(B)ᵀ's residues, int8.
  Packing packing(const ParamValues& v) const override {
    auto& t = v.at("tile");
    const int n = v.at("moduli")[0];
    auto& cl = v.at("cluster");
    Packing p{"ozaki_residues", n > 0 ? n : ozaki::kMaxModuli, t[0] / cl[1], t[1] / cl[0], 128};
    p.scan_entry = "ozaki_scan";
    p.odd_lines = v.at("pitch")[0] == 0;
    return p;
  }
  std::string unsupported(const ParamValues&, const Problem& p) const override {
    if (p.k < 1) return "K = 0 has no product to emulate";
    if (p.k > ozaki::kMaxK)
      return "K above " + std::to_string(ozaki::kMaxK) + ": an INT32 sum of int8 residue products could overflow";
    const long long rows = std::max(p.m, p.n);
    if (rows > (1ll << 31) - 1) return "M and N must stay below 2^31 for TMA";
    if ((rows + 31) / 32 > 65535) return "max(M, N) / 32 exceeds the 65535 limit of the pre-passes' gridDim.y";
    return {};
  }
  // Per block, modulus and K tile: one TMA copy of each residue tile; the tensor cores read shared
  // memory directly. The pre-passes (a scan and the residues) are separate kernels.
  KernelModel model(const ParamValues& v, const Problem& p, const Variant&) const override {
    auto& t = v.at("tile");
    const double n = typical_moduli(v, p), ktiles = double((p.k + 127) / 128), blocks = double(tiles(v, p));
    KernelModel m;
    m.global_load_inst = 0;
    m.global_async_inst = 0;
    m.tma_load_inst = blocks * n * ktiles * 2;
    auto& cl = v.at("cluster");  // a cluster's shares of the tiles are read once
    m.global_load_bytes = blocks * n * ktiles * 128.0 * (double(t[0]) / cl[1] + double(t[1]) / cl[0]);
    m.shared_load_inst = 0;
    m.shared_store_inst = 0;
    tiled::add_epilogue(m, p, blocks * (t[0] / 64) * 4 * double(t[1] / 2));
    m.assumptions = {"edge tiles counted like interior ones", "the pre-passes are not counted",
                     "moduli: as many as normal inputs need at this K (the kernel chooses from the data)"};
    return m;
  }
  std::vector<std::string> search_space() const override {
    // Measured (results/h100/ozaki): clusters neither help nor hurt much; tiles above 128 x 128 do not fit.
    return product_space(*this, {{"tile", {"128x128", "128x64"}},
                                 {"stages", {"4", "6"}},
                                 {"cluster", {"1x1", "2x1"}}});
  }

 private:
  static long long tiles(const ParamValues& v, const Problem& p) {
    auto& t = v.at("tile");
    return ((p.m + t[0] - 1) / t[0]) * ((p.n + t[1] - 1) / t[1]);
  }
  // INT32 accumulators and the float64 sums (two registers each) of a warpgroup's rows.
  static int registers(const ParamValues& v) {
    auto& t = v.at("tile");
    const int per = t[0] / v.at("consumers")[0] / 64 * t[1] / 2;
    return 3 * per + 36;
  }
  static long long smem(const ParamValues& v) {
    auto& t = v.at("tile");
    return 128ll * v.at("stages")[0] * (t[0] + t[1]) + 1024 + 16ll * v.at("stages")[0];
  }
};

}  // namespace

const KernelFamily& ozaki_family() {
  static const Ozaki f;
  return f;
}

}  // namespace gemmlab
