// tf32: FP32 GEMM on the tensor cores (mma.sync m16n8k8, sm_80+). MODE 3 (3xTF32) splits each
// operand into a TF32 "big" part and the TF32 rounding of its remainder ("small") and adds three
// products, small·big + big·small + big·big, smallest first: FP32-level accuracy. MODE 1 (1xTF32)
// is one product of the rounded operands: TF32 accuracy, always labelled so. SPLIT 0 rounds the big
// part to nearest (cvt.rna), SPLIT 1 truncates it: the small part then carries up to 2^-10 of x,
// and the dropped small·small term up to 2^-20 of a product, four times round's (lower precision).
//
// Tiles: A is kept m-major (As[m][k], rows of BK + 4 floats) and B k-major (Bs[k][n], rows of
// BN + 8): both are then read by the mma fragments without bank conflicts (lanes 4g + t of a
// fragment hit banks 4g + t and 8t + g), and both are copied with 16-byte cp.async when the
// operand is contiguous along that row and aligned. STAGES tiles are in flight.
#include "gemm_tile.cuh"
#include "tf32_split.cuh"

constexpr int WARPS_N = BN / WN;
constexpr int NT = (BM / WM) * WARPS_N * 32;
constexpr int MT = WM / 16, NTL = WN / 8;  // mma tiles per warp along M and N
constexpr int LDA = BK + 4, LDB = BN + 8;
constexpr int kStageA = BM * LDA, kStage = kStageA + BK * LDB;

// Copies the R x C tile at (r0, c0) of a matrix with element (r, c) at p[r*sr + c*sc] (rows x cols
// in extent) into dst[r*LD + c], zero-filling what lies outside. CONTIG: sc == 1, so a row is
// contiguous in both places and 16-byte copies serve when VEC; otherwise 4-byte copies with
// consecutive threads on consecutive r (sr == 1 then), so the global side stays coalesced.
template <int R, int C, int LD, bool CONTIG, bool VEC>
__device__ inline void copy_tile(float* dst, const float* p, long long sr, long long sc, long long rows,
                                 long long cols, long long r0, long long c0) {
  if (CONTIG && VEC) {
    static_assert(C % 4 == 0 && (R * C / 4) % NT == 0, "16-byte chunks must divide among the threads");
#pragma unroll
    for (int i = 0; i < R * C / 4 / NT; ++i) {
      int e = threadIdx.x + i * NT, r = e / (C / 4), c = (e % (C / 4)) * 4;
      long long gr = r0 + r, gc = c0 + c, left = cols - gc;
      int valid = gr < rows ? int(left >= 4 ? 4 : (left > 0 ? left : 0)) : 0;
      gl::cp_async16(dst + r * LD + c, valid ? p + gr * sr + gc : p, valid);
    }
  } else {
    static_assert((R * C) % NT == 0, "tile elements must divide among the threads");
    // Not unrolled in full: every copy's address held at once cost ~100 registers and spills.
#pragma unroll 2
    for (int i = 0; i < R * C / NT; ++i) {
      int e = threadIdx.x + i * NT;
      int r = CONTIG ? e / C : e % R, c = CONTIG ? e % C : e / R;
      long long gr = r0 + r, gc = c0 + c;
      bool valid = gr < rows && gc < cols;
      gl::cp_async4(dst + r * LD + c, valid ? p + gr * sr + gc * sc : p, valid);
    }
  }
}

extern "C" __global__ void __launch_bounds__(NT) gemm_tf32(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
  const int gid = lane / 4, tig = lane % 4;  // the fragment's row group and thread in group

  float acc[MT][NTL][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  const int tiles = gl::k_tiles(g, BK);
  auto slot = [&](int tile) { return smem + (tile % STAGES) * kStage; };
  auto issue = [&](int tile) {
    if (tile < tiles) {
      float* s = slot(tile);
      const long long k0 = (long long)tile * BK;
      copy_tile<BM, BK, LDA, A_K_CONTIG, A_VEC>(s, g.a, g.a_row, g.a_col, g.m, g.k, m0, k0);
      copy_tile<BK, BN, LDB, B_N_CONTIG, B_VEC>(s + kStageA, g.b, g.b_row, g.b_col, g.k, g.n, k0, n0);
    }
    gl::cp_async_commit();
  };
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) issue(s);

  for (int tile = 0; tile < tiles; ++tile) {
    gl::cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile is visible; the slot refilled next (tile - 1's) is no longer read
    issue(tile + STAGES - 1);
    const float* As = slot(tile);
    const float* Bs = As + kStageA;
#pragma unroll
    for (int k = 0; k < BK; k += 8) {
      unsigned a_big[MT][4], a_small[MT][4], b_big[NTL][2], b_small[NTL][2];
#pragma unroll
      for (int i = 0; i < MT; ++i) {
        const float* a = As + (wm + i * 16 + gid) * LDA + k + tig;
        const float v[4] = {a[0], a[8 * LDA], a[4], a[8 * LDA + 4]};
#pragma unroll
        for (int r = 0; r < 4; ++r) tf32::split<MODE, SPLIT>(v[r], a_big[i][r], a_small[i][r]);
      }
#pragma unroll
      for (int j = 0; j < NTL; ++j) {
        const float* b = Bs + (k + tig) * LDB + wn + j * 8 + gid;
        const float v[2] = {b[0], b[4 * LDB]};
#pragma unroll
        for (int r = 0; r < 2; ++r) tf32::split<MODE, SPLIT>(v[r], b_big[j][r], b_small[j][r]);
      }
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NTL; ++j) {
          if (MODE == 3) {
            // The tensor cores add with round-toward-zero: accumulated there over all of K, the
            // error grows with K and biases all-positive inputs (measured: 1.7e-4 relative at
            // K = 16384, 1500x cuBLAS SGEMM's). So each k step's three products go into a fresh
            // fragment, which FP32 adds (round to nearest) to the accumulator.
            float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            tf32::mma(t, a_small[i], b_big[j]);
            tf32::mma(t, a_big[i], b_small[j]);
            tf32::mma(t, a_big[i], b_big[j]);
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] += t[r];
          } else {
            tf32::mma(acc[i][j], a_big[i], b_big[j]);
          }
        }
    }
  }

  // c0, c1: row gid, columns 2·tig and 2·tig + 1; c2, c3: row gid + 8.
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NTL; ++j) {
      const long long r = m0 + wm + i * 16 + gid, c = n0 + wn + j * 8 + 2 * tig;
      gl::store_c_split<MODE>(g, r, c, acc[i][j][0]);
      gl::store_c_split<MODE>(g, r, c + 1, acc[i][j][1]);
      gl::store_c_split<MODE>(g, r + 8, c, acc[i][j][2]);
      gl::store_c_split<MODE>(g, r + 8, c + 1, acc[i][j][3]);
    }
}
