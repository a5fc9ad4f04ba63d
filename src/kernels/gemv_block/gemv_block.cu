// gemv-block: one block per output, for short and wide matrices where a warp per row leaves
// too few warps (and too few bytes in flight) to fill the GPU. The block's threads share the
// row with 16-byte loads; the reduction has two stages (warp shuffles, then one warp over the
// per-warp sums in shared memory). gridDim.x (up to 2^31 - 1) has room for any M.
#include "gemv_common.cuh"

extern "C" __global__ void __launch_bounds__(THREADS) gemv_block(GemmArgs g) {
  __shared__ float scratch[32];
  const long long i = blockIdx.x;
  float acc = dot_row<THREADS, UNROLL>(g.a + i * g.a_row, g.b, g.k, threadIdx.x, g.b_row);
  acc = block_sum<THREADS>(acc, scratch);
  if (threadIdx.x == 0) store_y(g, i, acc);
}
