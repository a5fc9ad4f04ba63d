// dmma: FP32 GEMM on the FP64 tensor cores (mma.sync m16n8k{4,8,16} .f64, sm_90). A float widens
// to a double exactly, the product of two is exact in FP64 (24 + 24 significand bits fit its 53) and
// the tensor cores add in FP64, so C is rounded once, at the store: the error bound of FP64
// accumulators (accumulate.cuh, at most K·2^-53 of |A||B| before that rounding) on any input. On
// the H100 the FP64 tensor cores run as many flops as the FP32 FFMA pipes, where DFMA runs half.
//
// The tiles come through warptiled's cp.async pipeline (gemm_tile.cuh), each laid out as its operand
// lies, so that every copy is 16 bytes wide where the operand is aligned: k-major (rows of BM + 8
// floats) for an operand contiguous along M or N, outer-major (rows of BK + 4) for one contiguous
// along K. A fragment's lanes (k = tig, o = gid) then read banks 8·tig + gid, or 4·gid + tig (times
// 5 for BK = 16): no conflicts either way. They are read as floats and widened in registers: half
// the shared-memory bytes of a tile of doubles.
#include "gemm_tile.cuh"

#ifndef STORE_STAGED
#define STORE_STAGED 0  // 1: C through shared memory (WarpTile::store_staged)
#endif

constexpr int WARPS_N = BN / WN;
constexpr int NT = (BM / WM) * WARPS_N * 32;
constexpr int MT = WM / 16, NTL = WN / 8;  // mma tiles per warp along M and N

template <int OUTER, bool K_CONTIG>
struct TileOf {
  using type = gl::KTile<OUTER, BK, 8, false>;
};
template <int OUTER>
struct TileOf<OUTER, true> {
  using type = gl::OTile<OUTER, BK, 4>;
};
using TileA = TileOf<BM, A_K_CONTIG>::type;
using TileB = TileOf<BN, !B_N_CONTIG>::type;

static_assert(MMA_K == 4 || MMA_K == 8 || MMA_K == 16, "the FP64 mma shapes are m16n8k4, m16n8k8 and m16n8k16");

namespace dmma {

// d += a·b over one m16n8kMMA_K step: a holds MMA_K/2 values of A per lane, b MMA_K/4 of B.
__device__ inline void mma(double (&d)[4], const double* a, const double* b) {
  if constexpr (MMA_K == 4) {
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (MMA_K == 8) {
    asm(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
}

// A warp's WM x WN patch of C as MT x NTL mma tiles of 16 x 8, in FP64. Fragment layout (lane =
// 4·gid + tig): A's value v at row gid + 8·(v % 2), k tig + 4·(v / 2); B's value v at k tig + 4·v,
// column gid; C's value v at row gid + 8·(v / 2), column 2·tig + v % 2.
struct WarpTile {
  double acc[MT][NTL][4];

  __device__ void zero() {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NTL; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.0;
  }

  // One K tile from shared memory; (row0, col0): the warp's patch in the block tile.
  template <int KSTEPS, class TA, class TB>
  __device__ void mma(const float* As, const float* Bs, int row0, int col0) {
    const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
#pragma unroll
    for (int k = 0; k < KSTEPS; k += MMA_K) {
      double a[MT][MMA_K / 2], b[NTL][MMA_K / 4];
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int v = 0; v < MMA_K / 2; ++v) a[i][v] = As[TA::index(k + tig + 4 * (v / 2), row0 + i * 16 + gid + 8 * (v % 2))];
#pragma unroll
      for (int j = 0; j < NTL; ++j)
#pragma unroll
        for (int v = 0; v < MMA_K / 4; ++v) b[j][v] = Bs[TB::index(k + tig + 4 * v, col0 + j * 8 + gid)];
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NTL; ++j) dmma::mma(acc[i][j], a[i], b[j]);
    }
  }

  // Each lane's pairs of adjacent columns, one 8-byte store where C allows (vec). plane: which float of
  // a split partial sum (gl::partial_plane; 0, the sum rounded, for C itself).
  __device__ void store(const GemmArgs& g, long long m0, long long n0, int row0, int col0, bool vec, int plane,
                        bool padded) const {
    const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < NTL; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float v[2] = {gl::partial_plane(acc[i][j][2 * h], plane), gl::partial_plane(acc[i][j][2 * h + 1], plane)};
          gl::store_c_run<2>(g, m0 + row0 + i * 16 + gid + 8 * h, n0 + col0 + j * 8 + 2 * tig, v, vec, padded);
        }
  }

  // store=staged: a lane's results are pairs of a row, so a direct store of the warp writes 8 rows
  // in 32-byte pieces (16 sectors of 16 lines, where a 16-byte store of consecutive lanes writes
  // whole 128-byte lines), and at short K the stores are the call (C at 2.1 TB/s, tk-16384²x16 0.89x
  // cuBLAS SGEMM; perf-log 125). Staged, each m16 row block of the warp's patch goes to `stage` and
  // back out a row run at a time: 16-byte stores of consecutive lanes where C's rows allow them,
  // else a float a lane (one 128-byte run per store either way). The pitch puts a quad's 8-byte
  // writes of eight rows on distinct banks.
  static constexpr bool kStagesEveryC = STORE_STAGED;
  static constexpr int kStagePitch = WN + 8, kStageFloats = 16 * kStagePitch;
  __device__ void store_staged(const GemmArgs& g, long long m0, long long n0, int row0, int col0, float* stage) const {
    const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
      for (int j = 0; j < NTL; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          *reinterpret_cast<float2*>(stage + (gid + 8 * h) * kStagePitch + j * 8 + 2 * tig) =
              make_float2(gl::partial_plane(acc[i][j][2 * h], 0), gl::partial_plane(acc[i][j][2 * h + 1], 0));
      __syncwarp();
      const long long r0 = m0 + row0 + i * 16, c0 = n0 + col0;
      // 16 rows of WN floats: 4·WN float4s (WN / 8 a lane) or 16·WN floats (WN / 2 a lane).
      if (C_VEC) {
#pragma unroll
        for (int q = 0; q < WN / 8; ++q) {
          const int e = lane + 32 * q, r = e / (WN / 4), c = 4 * (e % (WN / 4));
          gl::store_c_run<4>(g, r0 + r, c0 + c, stage + r * kStagePitch + c, true);
        }
      } else {
#pragma unroll 4
        for (int q = 0; q < WN / 2; ++q) {
          const int e = lane + 32 * q, r = e / WN, c = e % WN;
          gl::store_c(g, r0 + r, c0 + c, stage[r * kStagePitch + c]);
        }
      }
      __syncwarp();  // read before the next row block overwrites it
    }
  }
};

}  // namespace dmma

extern "C" __global__ void __launch_bounds__(NT) gemm_dmma(GemmArgs g) {
  follow_previous_grid();
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int warp = threadIdx.x / 32;
  const int row0 = (warp / WARPS_N) * WM, col0 = (warp % WARPS_N) * WN;
  dmma::WarpTile t;
  t.zero();
  gl::cp_async_gemm<BM, BN, BK, NT, STAGES, GROUP, false, PERSISTENT, STORE_STAGED, double, TileA, TileB>(
      g, smem, t, row0, col0);
}

extern "C" __global__ void __launch_bounds__(256) gemm_splitk_reduce(GemmArgs g, int splits) {
  follow_previous_grid();
  gl::splitk_reduce<double>(g, splits);
}
