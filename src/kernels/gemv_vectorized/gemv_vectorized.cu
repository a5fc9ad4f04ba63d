// gemv-vectorized: 16-byte streaming loads of contiguous rows, UNROLL of them in flight per
// lane, and ROWS rows per warp: a warp splits into ROWS groups of 32/ROWS lanes, one row each,
// which keeps all lanes busy when rows are short. Unaligned rows are peeled to a 16-byte
// boundary (dot_row), so any leading dimension and offset runs with wide loads. ACCUM 1: FP64
// sums (exact products, one rounding: tensor_fp32's arithmetic) at the same loads.
#include "gemv_common.cuh"

constexpr int kLanes = 32 / ROWS;
using Accumulator = gl::AccumulatorOf<ACCUM>::type;

extern "C" __global__ void __launch_bounds__(WARPS * 32) gemv_vectorized(GemmArgs g) {
  follow_previous_grid();
  const int group = (threadIdx.x & 31) / kLanes, lane = threadIdx.x % kLanes;
  const long long i = ((long long)blockIdx.x * WARPS + (threadIdx.x >> 5)) * ROWS + group;
  // Lanes past the last row still join the shuffles (full-warp masks), with a zero sum.
  Accumulator acc =
      i < g.m ? dot_row<kLanes, UNROLL, Accumulator>(g.a + i * g.a_row, g.b, g.k, lane, g.b_row) : Accumulator(0);
  acc = group_sum<kLanes>(acc);
  if (lane == 0 && i < g.m) store_y(g, i, float(acc));
}
