// regblock-1d: a BM × BN × BK shared-memory tile, each thread computing a column strip of TM
// outputs. One B value from shared memory now feeds TM FMAs, so shared-memory traffic per FMA
// drops by TM.
#include "gemm_tile.cuh"

constexpr int NT = BM * BN / TM;

extern "C" __global__ void __launch_bounds__(NT) gemm_regblock1d(GemmArgs g) {
  follow_previous_grid();
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const gl::Operand A = gl::operand_a(g), B = gl::operand_b(g);
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
  const int col = threadIdx.x % BN, row0 = (threadIdx.x / BN) * TM;
  float acc[TM] = {};
  for (long long k0 = 0; k0 < g.k; k0 += BK) {
    if (gl::loads_tile(k0)) {  // the load and the shared store are one statement: noload skips both
      for (int e = threadIdx.x; e < BM * BK; e += NT) As[e / BK][e % BK] = A.get(m0 + e / BK, k0 + e % BK);
      for (int e = threadIdx.x; e < BK * BN; e += NT) Bs[e / BN][e % BN] = B.get(n0 + e % BN, k0 + e / BN);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float b = Bs[k][col];
#pragma unroll
      for (int t = 0; t < TM; ++t) acc[t] += As[row0 + t][k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int t = 0; t < TM; ++t) gl::store_c(g, m0 + row0 + t, n0 + col, acc[t]);
}
