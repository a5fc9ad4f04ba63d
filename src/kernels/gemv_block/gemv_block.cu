// gemv-block: one block per output, for short and wide matrices where a warp per row leaves
// too few warps (and too few bytes in flight) to fill the GPU. The block's threads share the
// row with 16-byte loads; the reduction has two stages (warp shuffles, then one warp over the
// per-warp sums in shared memory). gridDim.x (up to 2^31 - 1) has room for any M. With fewer
// rows than the GPU holds blocks (a dot product is one row), gridDim.z blocks share each row's
// reduction in chunks of whole 16-byte groups, and the last of them adds the chunks in a fixed order.
#include "gemv_common.cuh"

using Accumulator = gl::AccumulatorOf<ACCUM>::type;

extern "C" __global__ void __launch_bounds__(THREADS) gemv_block(GemmArgs g) {
  follow_previous_grid();
  __shared__ Accumulator scratch[32];
  const long long i = blockIdx.x;
  const long long chunk = ((g.k + gridDim.z - 1) / gridDim.z + 3) / 4 * 4;
  const long long p0 = blockIdx.z * chunk;
  const long long len = p0 < g.k ? (g.k - p0 < chunk ? g.k - p0 : chunk) : 0;
  Accumulator acc =
      dot_row<THREADS, UNROLL, Accumulator>(g.a + i * g.a_row + p0, g.b + p0 * g.b_row, len, threadIdx.x, g.b_row);
  acc = block_sum<THREADS>(acc, scratch);
  if (gridDim.z == 1) {
    if (threadIdx.x == 0) store_y(g, i, float(acc));
    return;
  }
  if (threadIdx.x == 0) gl::store_partial(g.workspace + blockIdx.z * gl::kPartialPlanes<Accumulator> * g.m + i, g.m, acc);
  add_splits_if_last<Accumulator, THREADS>(g, g.counters + i, i, 1, threadIdx.x);
}
