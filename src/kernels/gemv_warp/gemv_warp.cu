// gemv-warp: one warp per output. The lanes stride through the row together, so a contiguous
// row is read 128 bytes per warp-wide load (coalesced whatever the row's length), and the 32
// partial sums meet in a warp-shuffle reduction: no shared memory, no barrier.
#include "gemv_common.cuh"

extern "C" __global__ void __launch_bounds__(WARPS * 32) gemv_warp(GemmArgs g) {
  follow_previous_grid();
  const long long i = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (i >= g.m) return;  // whole warps leave together: the shuffles below see full warps
  float acc = 0.0f;
  for (long long p = lane; p < g.k; p += 32) acc = fmaf(a_at(g, i, p), x_at(g, p), acc);
  acc = group_sum(acc);
  if (lane == 0) store_y(g, i, acc);
}
