// pipelined: seed 003's latency hiding on top of the vectorized design.
// MODE 0 (register prefetch): two shared-memory buffers; the next tile's global loads are issued
//   into registers before the current tile is computed and stored to the other buffer after it,
//   so their latency overlaps the FMAs; one barrier per step.
// MODE 1 (cp.async): STAGES shared-memory slots filled asynchronously by the copy engine path of
//   sm_80+, no registers in between (gl::cp_async_mainloop).
// FRAGS 2 double-buffers the register fragments (cp.async mode): step k+1's shared loads are
// issued before step k's FMAs, across tile boundaries too. In regprefetch mode and with FRAGS 1
// the compiler schedules the unrolled step's shared loads itself.
#include "gemm_tile.cuh"

constexpr int NT = (BM / TM) * (BN / TN);
using TileA = gl::KTileFor<BM, BK, CONFLICT>;
using TileB = gl::KTileFor<BN, BK, CONFLICT>;
using LoadA = gl::LoaderA<BM, BK, NT>;
using LoadB = gl::LoaderB<BN, BK, NT>;
using Tile = gl::ThreadTile<TM, TN, (BM / TM) * 4, (BN / TN) * 4>;
constexpr int kStage = TileA::kFloats + TileB::kFloats;

__device__ inline void register_prefetch_loop(const GemmArgs& g, float* smem, long long m0, long long n0, Tile& t,
                                              int row0, int col0) {
  const gl::Operand A = gl::operand_a(g), B = gl::operand_b(g);
  const long long tiles = (g.k + BK - 1) / BK;
  float4 ra[LoadA::kPerThread], rb[LoadB::kPerThread];
  LoadA::load(A, m0, 0, ra);
  LoadB::load(B, n0, 0, rb);
  LoadA::store<TileA>(smem, ra);
  LoadB::store<TileB>(smem + TileA::kFloats, rb);
  __syncthreads();
  for (long long tile = 0; tile < tiles; ++tile) {
    const bool more = tile + 1 < tiles;
    if (more && gl::loads_tile((tile + 1) * BK)) {
      LoadA::load(A, m0, (tile + 1) * BK, ra);
      LoadB::load(B, n0, (tile + 1) * BK, rb);
    }
    const float* s = smem + (tile % 2) * kStage;
    t.mma<BK, TileA, TileB>(s, s + TileA::kFloats, row0, col0);
    if (more && gl::stores_tile((tile + 1) * BK)) {
      float* next = smem + ((tile + 1) % 2) * kStage;
      LoadA::store<TileA>(next, ra);
      LoadB::store<TileB>(next + TileA::kFloats, rb);
    }
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(NT) gemm_pipelined(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
  const int row0 = (threadIdx.x / (BN / TN)) * 4, col0 = (threadIdx.x % (BN / TN)) * 4;
  Tile t;
  t.zero();
  if (MODE == 0)
    register_prefetch_loop(g, smem, m0, n0, t, row0, col0);
  else
    gl::cp_async_mainloop<BM, BN, BK, NT, STAGES, FRAGS == 2, TileA, TileB>(g, smem, m0, n0, t, row0, col0, 0,
                                                                         gl::k_tiles(g, BK));
  t.store(g, m0, n0, row0, col0);
}
