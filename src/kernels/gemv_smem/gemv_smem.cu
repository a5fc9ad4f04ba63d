// gemv-smem: one thread per output, with x staged in shared memory by the whole block (seed
// 002, part 2). STAGE_WHOLE: all of x once (it is the only operand every thread reuses); else
// tiles of TILE elements, loaded and consumed in turn between barriers. Reads of A are as in
// gemv-naive: coalesced only when op(A) is column-major.
#include "gemv_common.cuh"

extern "C" __global__ void __launch_bounds__(THREADS) gemv_smem(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float xs[];
  const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
  const long long chunk = STAGE_WHOLE ? g.k : TILE;
  float acc = 0.0f;
  for (long long p0 = 0; p0 < g.k; p0 += chunk) {
    const long long len = g.k - p0 < chunk ? g.k - p0 : chunk;
    // The barrier before the load keeps the previous tile until every thread has used it.
    __syncthreads();
    for (long long p = threadIdx.x; p < len; p += THREADS) xs[p] = x_at(g, p0 + p);
    __syncthreads();
    if (i < g.m)
      for (long long p = 0; p < len; ++p) acc = fmaf(a_at(g, i, p0 + p), xs[p], acc);
  }
  if (i < g.m) store_y(g, i, acc);
}
