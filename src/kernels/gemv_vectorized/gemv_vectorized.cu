// gemv-vectorized: 16-byte streaming loads of contiguous rows, UNROLL of them in flight per
// lane, and ROWS rows per warp: a warp splits into ROWS groups of 32/ROWS lanes, one row each,
// which keeps all lanes busy when rows are short. Unaligned rows are peeled to a 16-byte
// boundary (dot_row), so any leading dimension and offset runs with wide loads.
#include "gemv_common.cuh"

constexpr int kLanes = 32 / ROWS;

extern "C" __global__ void __launch_bounds__(WARPS * 32) gemv_vectorized(GemmArgs g) {
  follow_previous_grid();
  const int group = (threadIdx.x & 31) / kLanes, lane = threadIdx.x % kLanes;
  const long long i = ((long long)blockIdx.x * WARPS + (threadIdx.x >> 5)) * ROWS + group;
  // Lanes past the last row still join the shuffles (full-warp masks), with a zero sum.
  float acc = i < g.m ? dot_row<kLanes, UNROLL>(g.a + i * g.a_row, g.b, g.k, lane, g.b_row) : 0.0f;
  acc = group_sum<kLanes>(acc);
  if (lane == 0 && i < g.m) store_y(g, i, acc);
}
