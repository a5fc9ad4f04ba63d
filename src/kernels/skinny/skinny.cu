// skinny: C with few rows (the ROWS rows of a block; M up to ROWS reads op(B) once). A product of
// few rows is a GEMV with several vectors: its time is op(B) read once from DRAM, and the tiled
// kernels' shared-memory tiles and padded rows (a 16-row tile over 8 rows) only slow that stream.
// Here each thread streams its part of op(B) in rounds of UNROLL 16-byte pieces through its own
// ring of STAGES rounds in shared memory (cp.async: the bytes in flight hold no registers), and
// takes op(A)'s ROWS values at the same k from L1 (op(A) is small and every block reads it):
// - op(B) N-contiguous (B_N_CONTIG): a thread owns four neighbouring columns and walks its slice of
//   K down them; the warp's op(A) loads are one address (a broadcast);
// - op(B) K-contiguous: LANES lanes share a column, 16 bytes each at a time, so a warp owns 32 / LANES
//   columns; lanes of the same k read the same op(A) address (one L1 wavefront serves the warp's
//   op(A) load where each lane reading its own 16 bytes took four), and the column's lanes add
//   their sums at the end.
// With fp64tile each output's products are summed in FP32 over runs of kRun k, each run added in
// FP64 (warptiled's K tile of 16: the FP32 rounding grows with a run, not with K).
// K is split over gridDim.z blocks, each slice's partial sums to the workspace and summed by the
// reduce kernel (gemm_tile.cuh's split-K layout and order: deterministic).
#include "gemm_tile.cuh"
#include "gemv_common.cuh"

using Accumulator = gl::AccumulatorOf<ACCUM>::type;
// fp64tile's run: k steps summed in FP32 before the FP64 add (FP32 sums directly otherwise).
constexpr int kRun = 16;
constexpr bool kRuns = ACCUM == 2;
// Slices start on a multiple of kRun k: runs and 16-byte loads of K-contiguous rows stay aligned.
constexpr long long kSliceAlign = kRun;

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

// A thread's own ring of op(B) pieces in shared memory: STAGES rounds of UNROLL 16-byte pieces. The
// round's loads held in registers left 16-32 KB in flight an SM, and op(B) streamed at 1.8-2.5 TB/s
// (perf-log 112); copied with cp.async they hold none. Each piece is read back by the thread that
// copied it, so its own cp.async.wait_group orders the two and no barrier is needed.
extern __shared__ float4 ring_smem[];
__device__ __forceinline__ float4* ring_slot(int round, int u) {
  return ring_smem + ((round % STAGES) * UNROLL + u) * THREADS + threadIdx.x;
}
// Rounds 0..rounds-1: issue(t) copies round t's pieces into ring_slot(t, ·), use(t) reads them,
// STAGES - 1 rounds ahead (empty commit groups keep wait_group's count uniform at the end).
template <class Issue, class Use>
__device__ __forceinline__ void stream_rounds(int rounds, Issue issue, Use use) {
#pragma unroll 1
  for (int t = 0; t < STAGES - 1; ++t) {
    if (t < rounds) issue(t);
    gl::cp_async_commit();
  }
#pragma unroll 1
  for (int t = 0; t < rounds; ++t) {
    if (t + STAGES - 1 < rounds) issue(t + STAGES - 1);
    gl::cp_async_commit();
    gl::cp_async_wait<STAGES - 1>();
    use(t);
  }
  gl::cp_async_wait<0>();
}
// 16 bytes of op(B) from p into a slot, of which `valid` floats exist (zeros past them); 4-byte
// copies where 16-byte vectors are not aligned.
__device__ __forceinline__ void copy_piece(float4* slot, const float* p, int valid) {
  if (B_VEC) return gl::cp_async16(reinterpret_cast<float*>(slot), p, valid);
  float* d = reinterpret_cast<float*>(slot);
#pragma unroll
  for (int e = 0; e < 4; ++e) gl::cp_async4(d + e, e < valid ? p + e : p, e < valid);
}

// A thread's sums of N outputs: FP32 runs added to the accumulators at the end of each run
// (fp64tile), or the accumulators themselves.
template <int N>
struct Sums {
  Accumulator acc[N];
  float run[N];
  __device__ void zero() {
#pragma unroll
    for (int o = 0; o < N; ++o) acc[o] = 0, run[o] = 0.0f;
  }
  __device__ __forceinline__ void mac(int o, float a, float b) {
    if constexpr (kRuns)
      run[o] = fmaf(a, b, run[o]);
    else
      acc[o] = gl::mac(a, b, acc[o]);
  }
  __device__ __forceinline__ void flush() {
    if constexpr (kRuns) {
#pragma unroll
      for (int o = 0; o < N; ++o) acc[o] += Accumulator(run[o]), run[o] = 0.0f;
    }
  }
};

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
  const float* row = g.a + i * g.a_row;
  if (A_K_CONTIG && A_VEC && UNROLL % 4 == 0) {
#pragma unroll
    for (int u = 0; u < UNROLL; u += 4) {
      const float4 q = load4(row + k + u, true, false);
      a[u] = q.x, a[u + 1] = q.y, a[u + 2] = q.z, a[u + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) a[u] = __ldg(row + (k + u) * g.a_col);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_skinny(GemmArgs g) {
  follow_previous_grid();
  const long long j0 = ((long long)blockIdx.x * THREADS + threadIdx.x) * 4, i0 = (long long)blockIdx.y * ROWS;
  const int valid = int(min(4ll, max(0ll, g.n - j0)));
  long long k0, k1;
  slice_of(g, k0, k1);
  Sums<4 * ROWS> sums;
  sums.zero();
  if (valid > 0) {
    // Round t: UNROLL rows of op(B) from k0 + t·UNROLL; fp64tile's runs end every kRun steps.
    const int rounds = int((k1 - k0) / UNROLL);
    stream_rounds(
        rounds,
        [&](int t) {
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) copy_piece(ring_slot(t, u), g.b + (k0 + t * UNROLL + u) * g.b_row + j0, valid);
        },
        [&](int t) {
          const long long k = k0 + (long long)t * UNROLL;
          float4 b[UNROLL];
#pragma unroll
          for (int u = 0; u < UNROLL; ++u) b[u] = *ring_slot(t, u);
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            float a[UNROLL];
            load_a_steps(g, i0 + r, k, a);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
#pragma unroll
              for (int c = 0; c < 4; ++c) sums.mac(4 * r + c, a[u], at(b[u], c));
          }
          if ((k + UNROLL - k0) / kRun != (k - k0) / kRun) sums.flush();
        });
    // The slice's last steps (fewer than UNROLL), one at a time.
    for (long long k = k0 + (long long)rounds * UNROLL; k < k1; ++k) {
      const float* p = g.b + k * g.b_row + j0;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float a = i0 + r < g.m ? __ldg(g.a + (i0 + r) * g.a_row + k * g.a_col) : 0.0f;
#pragma unroll
        for (int c = 0; c < 4; ++c) sums.mac(4 * r + c, a, c < valid ? __ldcs(p + c) : 0.0f);
      }
    }
    sums.flush();
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) store_out(g, i0 + r, j0 + c, sums.acc[4 * r + c]);
}

#else
// ---- op(B) K-contiguous: LANES lanes a column, 16 bytes of its K each at a time ----

constexpr int kColumnsPerWarp = 32 / LANES;
constexpr int kRoundK = 4 * LANES * UNROLL;  // k a column's lanes cover in one round of loads

extern "C" __global__ void __launch_bounds__(THREADS) gemm_skinny(GemmArgs g) {
  follow_previous_grid();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, part = lane % LANES;
  const long long j = ((long long)blockIdx.x * (THREADS / 32) + warp) * kColumnsPerWarp + lane / LANES;
  const long long i0 = (long long)blockIdx.y * ROWS;
  long long k0, k1;
  slice_of(g, k0, k1);
  // A column past N reads the last column (in range) and is never stored; rows past M likewise.
  const float* col = g.b + min(j, g.n - 1) * g.b_col;
  const float* row[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) row[r] = g.a + min(i0 + r, g.m - 1) * g.a_row;

  Sums<ROWS> sums;
  sums.zero();
  const long long whole_end = k0 + (k1 - k0) / 4 * 4, k_first = k0 + 4 * part;
  // Round t: UNROLL pieces of the column from k_first + t·kRoundK, 4·LANES k apart, all inside the
  // slice's whole pieces; fp64tile's runs end every kRun products and with the round.
  const long long room = whole_end - k_first - (kRoundK - 4 * LANES + 4);
  const int rounds = room < 0 ? 0 : int(room / kRoundK + 1);
  stream_rounds(
      rounds,
      [&](int t) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) copy_piece(ring_slot(t, u), col + k_first + t * kRoundK + 4 * LANES * u, 4);
      },
      [&](int t) {
        const long long k = k_first + (long long)t * kRoundK;
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
          const float4 b = *ring_slot(t, u);
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const float4 a = load_a4(g, row[r], k + 4 * LANES * u);
#pragma unroll
            for (int q = 0; q < 4; ++q) sums.mac(r, at(a, q), at(b, q));
          }
          if ((4 * (u + 1)) % kRun == 0 || u == UNROLL - 1) sums.flush();
        }
      });
  long long k = k_first + (long long)rounds * kRoundK;
  for (; k < whole_end; k += 4 * LANES) {
    const float4 b = load4(col + k, B_VEC, true);
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const float4 a = load_a4(g, row[r], k);
#pragma unroll
      for (int t = 0; t < 4; ++t) sums.mac(r, at(a, t), at(b, t));
    }
  }
  // The slice's last k (fewer than four, K not a multiple of 4).
  for (long long kk = whole_end + part; kk < k1; kk += LANES)
#pragma unroll
    for (int r = 0; r < ROWS; ++r) sums.mac(r, __ldg(row[r] + kk * g.a_col), __ldg(col + kk));
  sums.flush();
  // The column's lanes add their sums (xor butterflies: a fixed order); lane r % LANES stores row r.
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const Accumulator sum = group_sum<LANES>(sums.acc[r]);
    if (part == r % LANES && j < g.n) store_out(g, i0 + r, j, sum);
  }
}
#endif

extern "C" __global__ void __launch_bounds__(256) gemm_splitk_reduce(GemmArgs g, int splits) {
  follow_previous_grid();
  gl::splitk_reduce<Accumulator>(g, splits);
}
