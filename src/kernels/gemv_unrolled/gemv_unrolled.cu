// gemv-unrolled: gemv-naive's thread-per-output dot product, unrolled UNROLL times into as many
// independent accumulators (seed 002, part 3). The loads of one step are independent, so a
// thread keeps UNROLL loads in flight; the price is registers, and a register cap (MAXREG,
// seed 002's -maxrregcount) below what the unrolled loop needs spills to local memory.
// __launch_bounds__ would override a cap, and the two attributes exclude each other.
#include "gemv_common.cuh"

#if MAXREG > 0
#define GEMV_BOUNDS __maxnreg__(MAXREG)
#else
#define GEMV_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void GEMV_BOUNDS gemv_unrolled(GemmArgs g) {
  follow_previous_grid();
  const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
  if (i >= g.m) return;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = 0.0f;
  long long p = 0;
  for (; p + UNROLL <= g.k; p += UNROLL) {
    float a[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) a[u] = a_at(g, i, p + u);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = fmaf(a[u], x_at(g, p + u), acc[u]);
  }
  for (; p < g.k; ++p) acc[0] = fmaf(a_at(g, i, p), x_at(g, p), acc[0]);
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) sum += acc[u];
  store_y(g, i, sum);
}
