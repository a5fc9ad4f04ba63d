// outer: a product with a short K (a rank-K update, C = alpha·op(A)·op(B) + beta·C with K of a few
// values) does little arithmetic per element of C: its time is C's store. A tiled kernel spends it
// on a prologue and a pipeline it never fills and stores its thread tiles from few resident blocks.
// Here each thread owns four adjacent columns and ROWS rows: per k, op(B)'s 4 values of its columns
// and op(A)'s value of each row (one broadcast load for the warp), the loop unrolled KC times so
// that the loads of several k are in flight; each row leaves as one 16-byte store, so a warp
// writes 512 contiguous bytes of a row at a time. Many small blocks keep many stores in flight.
#include "gemm_tile.cuh"

constexpr int kUnroll = KC;
using Accumulator = gl::AccumulatorOf<ACCUM>::type;  // FP64: exact products, one rounding

extern "C" __global__ void __launch_bounds__(THREADS) gemm_outer(GemmArgs g) {
  follow_previous_grid();
  const long long j0 = ((long long)blockIdx.y * THREADS + threadIdx.x) * 4;
  const long long i0 = (long long)blockIdx.x * ROWS;
  if (j0 >= g.n) return;
  Accumulator acc[ROWS][4];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int t = 0; t < 4; ++t) acc[r][t] = Accumulator(0);
  const float* b_cols = g.b + j0 * g.b_col;
  const float* a_rows = g.a + i0 * g.a_row;
  // Out of range k, rows and columns read as zero: the sums stay exact, the stores are guarded.
#pragma unroll kUnroll
  for (long long k = 0; k < g.k; ++k) {
    float bk[4];
#pragma unroll
    for (int t = 0; t < 4; ++t) bk[t] = j0 + t < g.n ? __ldg(b_cols + k * g.b_row + t * g.b_col) : 0.0f;
    const float* col = a_rows + k * g.a_col;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const float x = i0 + r < g.m ? __ldg(col + r * g.a_row) : 0.0f;
#pragma unroll
      for (int t = 0; t < 4; ++t) acc[r][t] = gl::mac(x, bk[t], acc[r][t]);
    }
  }
  // 16-byte stores where C's rows start on 16 bytes: a run-time test (one branch for the whole
  // kernel), so that an operand's alignment never changes the binary.
  const bool vec = ((reinterpret_cast<unsigned long long>(g.c) | (unsigned long long)(g.c_row * 4)) & 15) == 0;
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float v[4] = {float(acc[r][0]), float(acc[r][1]), float(acc[r][2]), float(acc[r][3])};
    gl::store_c4(g, i0 + r, j0, v, vec);
  }
}
