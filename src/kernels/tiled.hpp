#pragma once
// Host-side helpers shared by the tiled families' descriptions.
#include <string>

#include "kernels/family.hpp"

namespace gemmlab::tiled {

// One block per BM × BN tile of C: x walks column tiles, y row tiles.
inline LaunchGeometry grid(const Problem& p, int bm, int bn, dim3 block, size_t smem) {
  return {dim3(unsigned((p.n + bn - 1) / bn), unsigned((p.m + bm - 1) / bm)), block, smem};
}

// gridDim.y is limited to 65535 row tiles.
inline std::string grid_limit(const Problem& p, int bm) {
  if ((p.m + bm - 1) / bm > 65535) return "M / " + std::to_string(bm) + " exceeds the 65535 limit of gridDim.y";
  return {};
}

// `persistent` of the cp.async families (gl::cp_async_tile_loop in the kernel, defined as PERSISTENT).
inline ParamSpec persistent_param() {
  return {"persistent", {0}, 0, 1,
          "a block per tile, or the blocks resident at once walking the tiles with the next tiles' operands in "
          "flight while a tile's C is stored (short K)",
          {"no", "yes"}};
}
inline bool persistent(const ParamValues& v) { return v.at("persistent")[0] == 1; }
// Persistent: every tile along x (the launcher caps gridDim.x at the blocks resident at once).
inline LaunchGeometry grid(const Problem& p, int bm, int bn, dim3 block, size_t smem, bool persistent) {
  if (!persistent) return grid(p, bm, bn, block, smem);
  return {dim3(unsigned(((p.n + bn - 1) / bn) * ((p.m + bm - 1) / bm))), block, smem};
}
inline std::string grid_limit(const Problem& p, int bm, int bn, bool persistent) {
  if (!persistent) return grid_limit(p, bm);
  if (((p.n + bn - 1) / bn) * ((p.m + bm - 1) / bm) > 0x7fffffff)
    return "the tiles exceed the 2^31 - 1 limit of gridDim.x";
  return {};
}

inline std::string define(const char* name, int v) { return std::string("-D") + name + "=" + std::to_string(v); }

// The accumulators' parameter of the SIMT families that offer FP64 (accumulate.cuh), defined as ACCUM.
// tile_sums: also fp64tile, each K tile's products summed in FP32, the tiles' sums added in FP64.
inline ParamSpec accum_param(bool tile_sums = false) {
  if (tile_sums)
    return {"accum", {0}, 0, 2,
            "accumulators: FP32 (cuBLAS SGEMM's arithmetic), FP64 (exact products, one rounding) or fp64tile "
            "(FP32 sums of each K tile's BK products, added in FP64)",
            {"fp32", "fp64", "fp64tile"}};
  return {"accum", {0}, 0, 1, "accumulators: FP32 (cuBLAS SGEMM's arithmetic) or FP64 (exact products, one rounding)",
          {"fp32", "fp64"}};
}

// Checks shared by the families that stage k-major tiles with 16-byte chunks.
void chunk_violations(std::vector<std::string>& out, int bm, int bn, int bk, int tm, int tn, int threads);

// For the families with parameters tile (BM x BN x BK), vpt (TM x TN) and conflict
// (none | pad | swizzle): shared memory of `stages` k-major tiles of A and B, and every check
// of those parameters for a block of `threads` threads.
long long kstage_smem(const ParamValues& v, int stages);
void kstage_violations(std::vector<std::string>& out, const ParamValues& v, int threads, int stages);
// For the mma.sync families (tile BM x BN x BK, warp WM x WN, both in mma tiles of 16 x 8 x mma_k;
// one warp per warp tile): the tile rules, the threads per block, the even split of the tiles' 16-byte
// chunks among them, `smem` bytes of shared memory and `regs` registers per thread.
void mma_tile_violations(std::vector<std::string>& out, const ParamValues& v, int mma_k, long long smem, int regs);
// For a block of one thread per thread tile: the tile must be a multiple of vpt (false, with
// the message, when it is not).
bool vpt_divides_tile(std::vector<std::string>& out, const ParamValues& v);
// For the warp-tiled families (tile BM x BN, warp WM x WN, vpt TM x TN): the tile a multiple of
// the warp tile, the warp tile of vpt, and its lanes the 32 of a warp. False (with the messages)
// when a rule is broken.
bool warp_tile_fits(std::vector<std::string>& out, const ParamValues& v);
// (BM / TM) x (BN / TN): one thread per thread tile.
int grid_threads(const ParamValues& v);

}  // namespace gemmlab::tiled

// ---- the analytic model's helpers ----
namespace gemmlab::tiled {

inline int warps_of(int threads) { return (threads + 31) / 32; }

// Warp-level executions of `for (e = tid; e < n; e += nt) <one instruction>` in a block of nt
// threads: each warp runs as many iterations as its first thread.
double strided_warp_inst(long long n, int nt);

// Instructions one thread needs for `len` consecutive floats whose start is a multiple of
// `align` floats, when the compiler merges them into the widest aligned loads (128, 64, 32 bit).
int merged_loads(int len, int align);

// Blocks and K tiles of a BM x BN x BK tiling.
struct Tiling {
  double blocks, ktiles;
};
Tiling tiling(const Problem& p, int bm, int bn, int bk);

// The workspace of a persistent family's split or streamed tail (split_tail.cuh) over BM x BN tiles:
// an arrival counter per tile, and a whole tile of partial sums per split of every tile that may be
// in the tail (fewer than the resident blocks; all of them when that is unknown, resident = 0), or
// per slot of the stream.
long long tail_counters(const Problem& p, int bm, int bn, int splits, bool stream = false);
long long tail_workspace_floats(const Problem& p, int bm, int bn, int splits, int resident, bool stream = false);

// A persistent family with that tail (split_tail.cuh), over its `tile` parameter's BM x BN: the
// `splitk` and `tail` parameters, their constraint, and the workspace they ask for. The split's
// ways are gridDim.z (one binary serves every split); no reduce kernel: the last split of each tile
// adds the partial sums, counted on one arrival counter per tile.
class TailFamily : public KernelFamily {
 public:
  int splits(const ParamValues& v, const Problem&, int) const override { return v.at("splitk")[0]; }
  long long workspace_counters(const ParamValues& v, const Problem& p) const override;
  long long split_workspace_floats(const ParamValues& v, const Problem& p, int splits, int resident) const override;

 protected:
  static void add_tail_params(std::vector<ParamSpec>& params, int max_splits);
  static void tail_violations(std::vector<std::string>& out, const ParamValues& v);
  static bool stream(const ParamValues& v) { return v.at("tail")[0] == 1; }
};

// The k-major chunked families (vectorized, pipelined, warptiled): their loaders (synchronous
// through registers, or cp.async), the thread tile's 16-byte fragment loads and the epilogue.
// Edge tiles are counted like interior ones.
KernelModel chunked_model(const Problem& p, const Variant& var, int bm, int bn, int bk, int tm, int tn, int threads,
                          bool async);

// The families without shared memory (naive, coalesced): every thread reads a row of op(A) and a
// column of op(B) from global memory, one float per k each (run-time strides: nothing merges).
KernelModel direct_model(const Problem& p, const LaunchGeometry& g);

// The epilogue's C traffic: `stores` warp instructions writing m·n floats; beta ≠ 0 reads as many.
void add_epilogue(KernelModel& m, const Problem& p, double stores);

}  // namespace gemmlab::tiled
