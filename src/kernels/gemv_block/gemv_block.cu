// gemv-block: one block per output, for short and wide matrices where a warp per row leaves
// too few warps (and too few bytes in flight) to fill the GPU. The block's threads share the
// row with 16-byte loads; the reduction has two stages (warp shuffles, then one warp over the
// per-warp sums in shared memory). gridDim.x (up to 2^31 - 1) has room for any M. With fewer
// rows than the GPU holds blocks (a dot product is one row), gridDim.z blocks share each row's
// reduction in chunks of whole 16-byte groups, and the last of them adds the chunks in a fixed order.
#include "gemv_common.cuh"

using Accumulator = gl::AccumulatorOf<ACCUM>::type;

// Blocks of 1024 threads: with FP32 sums two to an SM (every thread slot: a stream of loads needs
// them all; left alone, ptxas gave the split sums' code 38 registers, one block per SM, and
// tf8192-down-T1 ran 23 % slower, perf-log 91), with FP64 sums one (in 32 registers they spill;
// left alone, ptxas now gives them 32). Smaller blocks keep ptxas's choice (a minimum of 1 block
// lets it take 92-166 registers).
#if THREADS >= 1024
#define GEMV_BLOCK_BOUNDS __launch_bounds__(THREADS, ACCUM == 0 ? 2 : 1)
#else
#define GEMV_BLOCK_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void GEMV_BLOCK_BOUNDS gemv_block(GemmArgs g) {
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
  constexpr int kPlanes = gl::kPartialPlanes<Accumulator>;
  if (threadIdx.x == 0) gl::store_partial(g.workspace + blockIdx.z * kPlanes * g.m + i, g.m, acc);
  if (!last_to_arrive(g.counters + i, threadIdx.x)) return;
  // The last block's threads share the splits' sums (thread t adds splits t, t + THREADS, ... in
  // order), then meet as the row's products did: a fixed order, whichever block is last. One
  // thread walking a dot product's 64 splits, a load each, was 2-3 us of its 11-13 (perf-log 91).
  Accumulator sum = 0;
  for (int s = threadIdx.x; s < gridDim.z; s += THREADS)
    sum += gl::partial_at<Accumulator>(g.workspace + s * kPlanes * g.m + i, g.m);
  sum = block_sum<THREADS>(sum, scratch);
  if (threadIdx.x == 0) {
    store_y(g, i, float(sum));
    g.counters[i] = 0;  // for the next call
  }
}
