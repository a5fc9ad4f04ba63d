// regblock-2d, seed 000's design: block BX × BY threads, each computing VX × VY values of a
// TY × TX tile, stepping TK along K. Each k loads VX values of B and VY of A into registers for
// VX·VY FMAs. PLACEMENT 0 (interleaved) spreads a thread's outputs BX columns / BY rows apart,
// so a warp's shared loads are consecutive; PLACEMENT 1 (lumped) gives each thread a
// contiguous VY × VX patch (seed 001, Fig. 1).
#include "gemm_tile.cuh"

constexpr int NT = BX * BY;

__device__ inline int out_col(int tx, int w) { return PLACEMENT == 0 ? tx + BX * w : tx * VX + w; }
__device__ inline int out_row(int ty, int q) { return PLACEMENT == 0 ? ty + BY * q : ty * VY + q; }

extern "C" __global__ void __launch_bounds__(NT) gemm_regblock2d(GemmArgs g) {
  follow_previous_grid();
  __shared__ float As[TY][TK];
  __shared__ float Bs[TK][TX];
  const gl::Operand A = gl::operand_a(g), B = gl::operand_b(g);
  const long long m0 = (long long)blockIdx.y * TY, n0 = (long long)blockIdx.x * TX;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  float sum[VY][VX] = {};
  for (long long k0 = 0; k0 < g.k; k0 += TK) {
    if (gl::loads_tile(k0)) {  // the load and the shared store are one statement: noload skips both
      for (int e = tid; e < TY * TK; e += NT) As[e / TK][e % TK] = A.get(m0 + e / TK, k0 + e % TK);
      for (int e = tid; e < TK * TX; e += NT) Bs[e / TX][e % TX] = B.get(n0 + e % TX, k0 + e / TX);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      float a_t[VY], b_t[VX];
#pragma unroll
      for (int w = 0; w < VX; ++w) b_t[w] = Bs[k][out_col(tx, w)];
#pragma unroll
      for (int q = 0; q < VY; ++q) a_t[q] = As[out_row(ty, q)][k];
#pragma unroll
      for (int q = 0; q < VY; ++q)
#pragma unroll
        for (int w = 0; w < VX; ++w) sum[q][w] += a_t[q] * b_t[w];
    }
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < VY; ++q)
#pragma unroll
    for (int w = 0; w < VX; ++w) gl::store_c(g, m0 + out_row(ty, q), n0 + out_col(tx, w), sum[q][w]);
}
