// coalesced: one thread per element of C, threadIdx.x walking columns. The threads of a warp read
// consecutive elements of a row of B (one 128-byte line per k instead of 32) and write consecutive
// elements of C; their A element is the same, a broadcast.
#include "gemm_args.h"
#include "grid_dependency.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) gemm_coalesced(GemmArgs g) {
  follow_previous_grid();
  long long j = (long long)blockIdx.x * BLOCK_X + threadIdx.x;
  long long i = (long long)blockIdx.y * BLOCK_Y + threadIdx.y;
  if (i >= g.m || j >= g.n) return;
  float acc = 0.0f;
  for (long long p = 0; p < g.k; ++p) acc += g.a[i * g.a_row + p * g.a_col] * g.b[p * g.b_row + j * g.b_col];
  float* c = g.c + i * g.c_row + j * g.c_col;
  *c = g.beta == 0.0f ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}
