// naive: one thread per element of C, the dot product read straight from global memory.
// threadIdx.x walks rows of C, so in row-major storage the threads of a warp touch addresses a
// whole row apart: every load of A and store of C is uncoalesced. This is the baseline the
// coalesced family fixes (it swaps the roles of x and y).
#include "gemm_args.h"
#include "grid_dependency.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) gemm_naive(GemmArgs g) {
  follow_previous_grid();
  long long i = (long long)blockIdx.x * BLOCK_X + threadIdx.x;
  long long j = (long long)blockIdx.y * BLOCK_Y + threadIdx.y;
  if (i >= g.m || j >= g.n) return;
  float acc = 0.0f;
  for (long long p = 0; p < g.k; ++p) acc += g.a[i * g.a_row + p * g.a_col] * g.b[p * g.b_row + j * g.b_col];
  float* c = g.c + i * g.c_row + j * g.c_col;
  // beta = 0 must not read C: it may hold NaN.
  *c = g.beta == 0.0f ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}
