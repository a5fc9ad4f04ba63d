// The persistent tile schedule of the Hopper families, with a split tail: the tiles that fill
// whole waves of the grid are computed whole, one block each; the tiles of the last, partial wave
// (every tile when there are fewer tiles than blocks) have their K split `splits` ways, so that
// the last wave keeps every SM busy for 1/splits of a tile's time instead of leaving most idle.
// Each split writes its partial sums to the workspace; the block that finishes a tile's last split
// adds them (tail::last_arrival). Plain C++ as well, so that the host model and tests share it.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TAIL_HD __host__ __device__
#else
#define TAIL_HD
#endif

namespace tail {

// One unit of a block's work: K tiles [k0, k1) of output tile `tile`; split -1 when the unit
// computes the whole tile, else which of the tile's splits it is.
struct Unit {
  long long tile;
  int k0, k1, split;
};

struct Schedule {
  long long tiles;  // output tiles
  long long whole;  // the first `whole` tiles are computed whole
  int splits;       // ways the other tiles' K is split
  int ktiles;       // K tiles of a whole tile

  TAIL_HD long long units() const { return whole + (tiles - whole) * splits; }
  // Unit u: whole tiles first (block b takes units b, b + blocks, ...), then the splits of the
  // tail, a tile's splits side by side. Split z takes K tiles [ktiles·z/splits, ktiles·(z+1)/splits).
  TAIL_HD Unit unit(long long u) const {
    if (u < whole) return {u, 0, ktiles, -1};
    const long long t = u - whole;
    const int z = int(t % splits);
    return {whole + t / splits, int((long long)ktiles * z / splits), int((long long)ktiles * (z + 1) / splits), z};
  }
};

// `blocks` persistent blocks: what the last wave leaves (tiles % blocks) is split, when splits > 1.
TAIL_HD inline Schedule schedule(long long tiles, long long blocks, int splits, int ktiles) {
  const long long tail = splits > 1 ? tiles % blocks : 0;
  return {tiles, tiles - tail, tail ? splits : 1, ktiles};
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
}  // namespace tail
#include "gemm_args.h"
namespace tail {

// After this block's threads (the first `threads` of it, all calling) wrote a split's partial sums:
// counts the arrival on the tile's counter and returns, in every one of those threads, whether this
// block was the tile's last split (it then adds them, and leaves the counter zero). The fence makes
// the partial sums visible before the arrival is counted; the last block reads the others' with
// ld.cg (L2), since its L1 may hold stale lines of the workspace from an earlier call.
__device__ inline bool last_arrival(unsigned* counter, int splits, int threads, bool* flag) {
  __threadfence();
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
  if (threadIdx.x == 0) *flag = atomicAdd(counter, 1u) == unsigned(splits - 1);
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
  const bool last = *flag;
  if (last) __threadfence();
  return last;
}

// The last split of a tile adds the tile's partial sums (the workspace holds [split][m][n]) in
// split order, so that the result does not depend on which split finished last, and hands each
// sum to store(row, column, sum). Row by row across the threads (the reads coalesce), four columns
// a load where rows are 16-byte aligned, and a batch of loads in flight per thread: the sums are
// latency-bound otherwise (one L2 round trip per element and split).
template <class Store>
__device__ inline void add_splits(const GemmArgs& g, int splits, long long r0, long long c0, int rows, int cols,
                                  int thread, int threads, Store store) {
  constexpr int kBatch = 8;
  const bool vec = g.n % 4 == 0 && c0 % 4 == 0 && cols % 4 == 0;
  const int width = vec ? 4 : 1, groups = rows * cols / width;
  for (int e0 = thread; e0 < groups; e0 += threads * kBatch) {
    float sum[kBatch][4] = {};
#pragma unroll 2
    for (int z = 0; z < splits; ++z)
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int e = (e0 + j * threads) * width;
        const long long r = r0 + e / cols, c = c0 + e % cols;
        if (e >= rows * cols || r >= g.m || c >= g.n) continue;
        const float* p = g.workspace + (z * g.m + r) * g.n + c;
        if (vec) {
          const float4 x = __ldcg(reinterpret_cast<const float4*>(p));
          sum[j][0] += x.x, sum[j][1] += x.y, sum[j][2] += x.z, sum[j][3] += x.w;
        } else {
          sum[j][0] += __ldcg(p);
        }
      }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int e = (e0 + j * threads) * width;
      const long long r = r0 + e / cols, c = c0 + e % cols;
      if (e >= rows * cols || r >= g.m) continue;
      for (int w = 0; w < width && c + w < g.n; ++w) store(r, c + w, sum[j][w]);
    }
  }
}
#endif

}  // namespace tail
