// gemv-naive: the seed-002 baseline. BLOCKS × THREADS threads (set by the configuration, not
// by the matrix); each owns a contiguous run of ceil(M / threads) outputs and reads its dot
// products straight from global memory. When rows of op(A) are contiguous (row-major, no
// transpose) the threads of a warp read addresses a row apart: uncoalesced. When op(A) is
// column-major they read neighbouring addresses: the same code is coalesced.
#include "gemv_common.cuh"

extern "C" __global__ void __launch_bounds__(THREADS) gemv_naive(GemmArgs g) {
  follow_previous_grid();
  const long long threads = (long long)gridDim.x * THREADS;
  const long long per_thread = (g.m + threads - 1) / threads;
  const long long t = (long long)blockIdx.x * THREADS + threadIdx.x;
  const long long first = t * per_thread, last = first + per_thread < g.m ? first + per_thread : g.m;
  for (long long i = first; i < last; ++i) {
    float acc = 0.0f;
    for (long long p = 0; p < g.k; ++p) acc = fmaf(a_at(g, i, p), x_at(g, p), acc);
    store_y(g, i, acc);
  }
}
