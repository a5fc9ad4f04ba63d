// skinny: C with few rows (the ROWS rows of a block; M up to ROWS reads op(B) once). A product of
// few rows is a GEMV with several vectors: its time is op(B) read once from DRAM, and the tiled
// kernels' shared-memory tiles and padded rows (a 16-row tile over 8 rows) only slow that stream.
// Here each thread streams its part of op(B) with 16-byte loads, UNROLL of them in flight, and
// takes op(A)'s ROWS values at the same k from L1 (op(A) is small and every block reads it):
// - op(B) N-contiguous (B_N_CONTIG): a thread owns four neighbouring columns and walks its slice of
//   K down them; the warp's op(A) loads are one address (a broadcast);
// - op(B) K-contiguous: a warp owns SPAN columns and its lanes share each one's run of K, 16 bytes
//   a lane; op(A)'s rows are read at the lanes' k, and the warp adds its lanes' sums at the end.
// K is split over gridDim.z blocks, each slice's partial sums to the workspace and summed by the
// reduce kernel (gemm_tile.cuh's split-K layout and order: deterministic).
#include "gemm_tile.cuh"
#include "gemv_common.cuh"

using Accumulator = gl::AccumulatorOf<ACCUM>::type;
constexpr int kWarps = THREADS / 32;
// Slices start on a multiple of this many k: 16-byte loads of K-contiguous rows stay aligned.
constexpr long long kSliceAlign = 16;

// The slice [k0, k1) of K this block sums.
__device__ inline void slice_of(const GemmArgs& g, long long& k0, long long& k1) {
  const long long chunk = ((g.k + gridDim.z - 1) / gridDim.z + kSliceAlign - 1) / kSliceAlign * kSliceAlign;
  k0 = min(g.k, (long long)blockIdx.z * chunk);
  k1 = min(g.k, k0 + chunk);
}

// Four consecutive floats from p: one 16-byte load where aligned (vec), else four.
__device__ __forceinline__ float4 load4(const float* p, bool vec, bool stream) {
  if (vec) return stream ? __ldcs(reinterpret_cast<const float4*>(p)) : __ldg(reinterpret_cast<const float4*>(p));
  return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
}
// op(A)(i, k..k+3) from its row's start: 16 bytes where K-contiguous and aligned.
__device__ __forceinline__ float4 load_a4(const GemmArgs& g, const float* row, long long k) {
  if (A_K_CONTIG) return load4(row + k, A_VEC, false);
  return make_float4(__ldg(row + k * g.a_col), __ldg(row + (k + 1) * g.a_col), __ldg(row + (k + 2) * g.a_col),
                     __ldg(row + (k + 3) * g.a_col));
}
__device__ __forceinline__ float at(const float4& v, int t) { return t == 0 ? v.x : t == 1 ? v.y : t == 2 ? v.z : v.w; }

// A run of products into an accumulator: fp64tile sums the run in FP32 and adds that once in FP64
// (one conversion a run, not two a product); the other accumulators take each product.
template <int N>
__device__ __forceinline__ void add_run(Accumulator& acc, const float (&a)[N], const float (&b)[N]) {
  if constexpr (ACCUM == 2) {
    float run = a[0] * b[0];
#pragma unroll
    for (int t = 1; t < N; ++t) run = fmaf(a[t], b[t], run);
    acc += Accumulator(run);
  } else {
#pragma unroll
    for (int t = 0; t < N; ++t) acc = gl::mac(a[t], b[t], acc);
  }
}

// This block's result for C(i, j): C itself, or with split K its slice's partial sums.
__device__ inline void store_out(const GemmArgs& g, long long i, long long j, Accumulator acc) {
  if (i >= g.m || j >= g.n) return;
  if (gridDim.z == 1) return gl::store_c(g, i, j, float(acc));
  constexpr int planes = gl::kPartialPlanes<Accumulator>;
  const long long plane = g.m * gl::partial_pitch(g.n);
  gl::store_partial(g.workspace + blockIdx.z * planes * plane + i * gl::partial_pitch(g.n) + j, plane, acc);
}

#if B_N_CONTIG
// ---- op(B) N-contiguous: a thread owns columns j0..j0+3 ----

// op(A)(i, k..k+UNROLL-1), zero for rows past M.
__device__ __forceinline__ void load_a_steps(const GemmArgs& g, long long i, long long k, float (&a)[UNROLL]) {
  if (i >= g.m) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) a[u] = 0.0f;
    return;
  }
  const float* row = g.a + i * g.a_row + k * g.a_col;
  if (A_K_CONTIG && A_VEC && UNROLL % 4 == 0) {
#pragma unroll
    for (int u = 0; u < UNROLL; u += 4) {
      const float4 q = __ldg(reinterpret_cast<const float4*>(row + u));
      a[u] = q.x, a[u + 1] = q.y, a[u + 2] = q.z, a[u + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) a[u] = __ldg(row + u * g.a_col);
  }
}

// op(B)(k, j0..j0+3), zero past N.
__device__ __forceinline__ float4 load_b_row(const GemmArgs& g, long long k, long long j0, bool whole) {
  const float* p = g.b + k * g.b_row + j0;
  if (whole && B_VEC) return __ldcs(reinterpret_cast<const float4*>(p));
  float v[4];
#pragma unroll
  for (int t = 0; t < 4; ++t) v[t] = j0 + t < g.n ? __ldcs(p + t) : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_skinny(GemmArgs g) {
  follow_previous_grid();
  const long long j0 = ((long long)blockIdx.x * THREADS + threadIdx.x) * 4, i0 = (long long)blockIdx.y * ROWS;
  const bool whole = j0 + 3 < g.n;
  long long k0, k1;
  slice_of(g, k0, k1);
  Accumulator acc[ROWS][4];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = 0;

  long long k = k0;
  if (j0 < g.n) {
    // UNROLL rows of op(B) in flight before the first product.
    for (; k + UNROLL <= k1; k += UNROLL) {
      float4 b[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) b[u] = load_b_row(g, k + u, j0, whole);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        float a[UNROLL];
        load_a_steps(g, i0 + r, k, a);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          float bc[UNROLL];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) bc[u] = at(b[u], c);
          add_run(acc[r][c], a, bc);
        }
      }
    }
    for (; k < k1; ++k) {
      const float4 b = load_b_row(g, k, j0, whole);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float a[1] = {i0 + r < g.m ? __ldg(g.a + (i0 + r) * g.a_row + k * g.a_col) : 0.0f};
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const float bc[1] = {at(b, c)};
          add_run(acc[r][c], a, bc);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) store_out(g, i0 + r, j0 + c, acc[r][c]);
}

#else
// ---- op(B) K-contiguous: a warp owns SPAN columns, its lanes 16 bytes of each one's K at a time ----

extern "C" __global__ void __launch_bounds__(THREADS) gemm_skinny(GemmArgs g) {
  follow_previous_grid();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long j0 = ((long long)blockIdx.x * kWarps + warp) * SPAN, i0 = (long long)blockIdx.y * ROWS;
  long long k0, k1;
  slice_of(g, k0, k1);
  // Columns past N read column j0's run again (in range) and are never stored.
  const float* col[SPAN];
#pragma unroll
  for (int s = 0; s < SPAN; ++s) col[s] = g.b + min(j0 + s, g.n - 1) * g.b_col;
  const float* row[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) row[r] = g.a + min(i0 + r, g.m - 1) * g.a_row;

  Accumulator acc[SPAN][ROWS];
#pragma unroll
  for (int s = 0; s < SPAN; ++s)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[s][r] = 0;

  if (j0 < g.n) {
    const long long whole_end = k0 + (k1 - k0) / 4 * 4;
    long long k = k0 + 4 * lane;
    // UNROLL 16-byte pieces of each column in flight, 128·UNROLL k a warp a round.
    for (; k + 128 * (UNROLL - 1) + 4 <= whole_end; k += 128 * UNROLL) {
      float4 b[SPAN][UNROLL];
#pragma unroll
      for (int s = 0; s < SPAN; ++s)
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) b[s][u] = load4(col[s] + k + 128 * u, B_VEC, true);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        float a[4 * UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const float4 q = load_a4(g, row[r], k + 128 * u);
          a[4 * u] = q.x, a[4 * u + 1] = q.y, a[4 * u + 2] = q.z, a[4 * u + 3] = q.w;
        }
#pragma unroll
        for (int s = 0; s < SPAN; ++s) {
          float bs[4 * UNROLL];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int t = 0; t < 4; ++t) bs[4 * u + t] = at(b[s][u], t);
          add_run(acc[s][r], a, bs);
        }
      }
    }
    for (; k < whole_end; k += 128) {
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 q = load_a4(g, row[r], k);
        const float a[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int s = 0; s < SPAN; ++s) {
          const float4 p = load4(col[s] + k, B_VEC, true);
          const float bs[4] = {p.x, p.y, p.z, p.w};
          add_run(acc[s][r], a, bs);
        }
      }
    }
    // The slice's last k (fewer than four, K not a multiple of 4): a lane each.
    if (whole_end + lane < k1) {
      const long long kk = whole_end + lane;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float a[1] = {__ldg(row[r] + kk * g.a_col)};
#pragma unroll
        for (int s = 0; s < SPAN; ++s) {
          const float bs[1] = {__ldg(col[s] + kk)};
          add_run(acc[s][r], a, bs);
        }
      }
    }
  }
  // The lanes' sums of each output, in a fixed order (xor butterflies): lane (s·ROWS + r) % 32 stores it.
#pragma unroll
  for (int s = 0; s < SPAN; ++s)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const Accumulator sum = group_sum(acc[s][r]);
      if (lane == (s * ROWS + r) % 32 && j0 < g.n) store_out(g, i0 + r, j0 + s, sum);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(256) gemm_splitk_reduce(GemmArgs g, int splits) {
  follow_previous_grid();
  gl::splitk_reduce<Accumulator>(g, splits);
}
