// warptiled: block tile → warp tile → thread tile, fed by the multi-stage cp.async pipeline.
// Each warp owns a WM × WN patch of the block tile and arranges its 32 lanes as (WM/TM) × (WN/TN);
// a lane's TM × TN outputs are 4 × 4 sub-tiles strided across the warp's patch, so the lanes of a
// warp read few, distinct 16-byte chunks of shared memory per k (broadcasts, no conflicts) and
// the warp's working set stays in a small region. Blocks sweep the columns in groups of GROUP block
// rows (gl::grouped_tile).
#include "gemm_tile.cuh"

constexpr int WARPS_N = BN / WN;
constexpr int NT = (BM / WM) * WARPS_N * 32;
constexpr int LANES_N = WN / TN;  // lanes along N in a warp
constexpr int LANES_M = WM / TM;
using TileA = gl::KTileFor<BM, BK, CONFLICT>;
using TileB = gl::KTileFor<BN, BK, CONFLICT>;
// ACCUM 1: FP64 accumulators (exact products, one rounding at the store); 2: FP32 sums of each K
// tile added to FP64 accumulators.
using Accumulator = gl::AccumulatorOf<ACCUM>::type;

// An unaligned C goes out through shared memory, the warp's lanes on consecutive columns of a row
// (ThreadTile::store_staged). Accumulators (and fp64tile's FP32 tile sums) over 64 registers (8x16
// in FP32, 8x8 in FP64, 8x4 fp64tile) leave none to spare for it (ptxas spilled 4-140 bytes):
// those keep the float-at-a-time stores.
constexpr bool STAGE_C = !C_VEC && TM * TN * (sizeof(Accumulator) + (ACCUM == 2 ? 4 : 0)) <= 64 * 4;

// MINBLOCKS asks the compiler to fit that many blocks per SM (at most 65536 / (NT · MINBLOCKS)
// registers per thread): more warps to hide latency against fewer registers for the tile.
extern "C" __global__ void __launch_bounds__(NT, MINBLOCKS) gemm_warptiled(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;
  const int col0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;
  gl::ThreadTile<TM, TN, LANES_M * 4, LANES_N * 4, Accumulator, ACCUM == 2> t;
  t.zero();
  gl::cp_async_gemm<BM, BN, BK, NT, STAGES, GROUP, FRAGS == 2, PERSISTENT, STAGE_C, Accumulator, TileA, TileB>(
      g, smem, t, row0, col0);
}

extern "C" __global__ void __launch_bounds__(256) gemm_splitk_reduce(GemmArgs g, int splits) {
  follow_previous_grid();
  gl::splitk_reduce<Accumulator>(g, splits);
}
