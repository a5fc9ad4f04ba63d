// vectorized: 128-bit global loads of whole 4-element chunks, A stored transposed (k-major) in
// shared memory so that a thread's TM values of A are TM/4 128-bit shared loads, like its TN
// values of B. The transposing store is where bank conflicts arise; CONFLICT 1 pads each shared
// row by 4 floats (the 128-bit version of seed 001's 64 × 17), CONFLICT 2 swizzles 16-byte
// chunks instead, CONFLICT 0 leaves them.
#include "gemm_tile.cuh"

constexpr int NT = (BM / TM) * (BN / TN);
using TileA = gl::KTileFor<BM, BK, CONFLICT>;
using TileB = gl::KTileFor<BN, BK, CONFLICT>;
using LoadA = gl::LoaderA<BM, BK, NT>;
using LoadB = gl::LoaderB<BN, BK, NT>;

extern "C" __global__ void __launch_bounds__(NT) gemm_vectorized(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float4 smem[];
  float* As = reinterpret_cast<float*>(smem);
  float* Bs = As + TileA::kFloats;
  const gl::Operand A = gl::operand_a(g), B = gl::operand_b(g);
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
  const int row0 = (threadIdx.x / (BN / TN)) * 4, col0 = (threadIdx.x % (BN / TN)) * 4;
  gl::ThreadTile<TM, TN, (BM / TM) * 4, (BN / TN) * 4> t;
  t.zero();
  float4 ra[LoadA::kPerThread], rb[LoadB::kPerThread];  // kept across tiles for the ablations
  for (long long k0 = 0; k0 < g.k; k0 += BK) {
    if (gl::loads_tile(k0)) {
      LoadA::load(A, m0, k0, ra);
      LoadB::load(B, n0, k0, rb);
    }
    __syncthreads();  // the previous step's reads are done
    if (gl::stores_tile(k0)) {
      LoadA::store<TileA>(As, ra);
      LoadB::store<TileB>(Bs, rb);
    }
    __syncthreads();
    t.mma<BK, TileA, TileB>(As, Bs, row0, col0);
  }
  t.store(g, m0, n0, row0, col0);
}
