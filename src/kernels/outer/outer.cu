// outer: a product with a short K (a rank-K update, C = alpha·op(A)·op(B) + beta·C with K of a few
// values) does little arithmetic per element of C: its time is C's store. A tiled kernel spends it
// on a prologue and a pipeline it never fills and stores its thread tiles from few resident blocks.
// Here each thread owns four adjacent columns and ROWS rows: per k, op(B)'s 4 values of its columns
// and op(A)'s value of each row (one broadcast load for the warp), 16-byte loads where the layout
// allows, the loop unrolled KC steps so that the loads of several k are in flight; each row leaves
// as one 16-byte store, so a warp writes 512 contiguous bytes of a row at a time. Many small blocks
// keep many stores in flight.
#include "gemm_tile.cuh"

constexpr int kUnroll4 = (KC + 3) / 4;  // KC steps of K unrolled, four at a time
using Accumulator = gl::AccumulatorOf<ACCUM>::type;  // FP64: exact products, one rounding
// With FP64 accumulators every thread of a block would widen the same op(A) values to double, and
// a conversion issues at a quarter of the DFMA rate (16 a clock per SM against 64): at 4 rows a
// thread's 8 conversions per k take twice the time of its 16 DFMAs. The block widens each op(A) value once
// instead, into shared memory, KSPAN steps of K at a time, and every thread reads them as
// broadcasts; from K = WIDEN_MIN_K (both the host's defines): below it the barriers' wait costs
// more than the conversions (perf-log 136). FP32 sums read op(A) from the cache: nothing to widen.
constexpr bool kWidenA = sizeof(Accumulator) == sizeof(double);
using AValue = Accumulator;  // op(A)'s values as the sums take them

extern "C" __global__ void __launch_bounds__(THREADS) gemm_outer(GemmArgs g) {
  follow_previous_grid();
  const long long j0 = ((long long)blockIdx.y * THREADS + threadIdx.x) * 4;
  const long long i0 = (long long)blockIdx.x * ROWS;
  const bool widen = kWidenA && g.k >= WIDEN_MIN_K;
  // Threads past N store nothing; where the block widens op(A) they stay for its barriers.
  if (!widen && j0 >= g.n) return;
  __shared__ double a_wide[kWidenA ? KSPAN : 1][ROWS];
  Accumulator acc[ROWS][4];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int t = 0; t < 4; ++t) acc[r][t] = Accumulator(0);
  const float* b_cols = g.b + j0 * g.b_col;
  const float* a_rows = g.a + i0 * g.a_row;
  // 16-byte loads where an operand allows them: op(B)'s 4 columns adjacent and aligned (b_col 1),
  // 4 steps of a row of op(A) adjacent and aligned (a_col 1): 16 load instructions a thread at
  // 8192 x 8192 x 8 instead of 64, which bound the FP32 kernel's stores at 1.9 TB/s (140 → 120 us,
  // perf-log 86). Run-time tests, like C's below; out of range k, rows and columns read as zero
  // (the sums stay exact).
  auto aligned = [](const float* p, long long stride) {
    return ((reinterpret_cast<unsigned long long>(p) | (unsigned long long)(stride * 4)) & 15) == 0;
  };
  const bool b_vec = g.b_col == 1 && aligned(g.b, g.b_row) && j0 + 3 < g.n;
  const bool a_vec = g.a_col == 1 && aligned(g.a, g.a_row);
  auto b_at = [&](long long k, float (&bk)[4]) {
    if (b_vec) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(b_cols + k * g.b_row));
      bk[0] = v.x, bk[1] = v.y, bk[2] = v.z, bk[3] = v.w;
    } else {
#pragma unroll
      for (int t = 0; t < 4; ++t) bk[t] = j0 + t < g.n ? __ldg(b_cols + k * g.b_row + t * g.b_col) : 0.0f;
    }
  };
  // Row r's values at steps k .. k + 3 (span: the first step of the widened span).
  auto a_run = [&](int r, long long k, long long span, AValue (&x)[4]) {
    if (widen) {
#pragma unroll
      for (int s = 0; s < 4; ++s) x[s] = AValue(a_wide[k - span + s][r]);
      return;
    }
#pragma unroll
    for (int s = 0; s < 4; ++s) x[s] = AValue(0);
    if (i0 + r >= g.m) return;
    const float* row = a_rows + r * g.a_row + k * g.a_col;
    if (a_vec) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(row));
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
#pragma unroll
      for (int s = 0; s < 4; ++s) x[s] = __ldg(row + s * g.a_col);
    }
  };
  auto a_one = [&](int r, long long k, long long span) -> AValue {
    if (widen) return AValue(a_wide[k - span][r]);
    return i0 + r < g.m ? __ldg(a_rows + r * g.a_row + k * g.a_col) : 0.0f;
  };
  // Steps begin .. end - 1 of K (span: the first step in shared memory).
  auto sums = [&](long long begin, long long end, long long span) {
    long long k = begin;
    // Four steps at a time, each element's sum still in order of k.
#pragma unroll kUnroll4
    for (; k + 4 <= end; k += 4) {
      float bk[4][4];
#pragma unroll
      for (int s = 0; s < 4; ++s) b_at(k + s, bk[s]);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        AValue x[4];
        a_run(r, k, span, x);
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
          for (int t = 0; t < 4; ++t) acc[r][t] = gl::mac(x[s], bk[s][t], acc[r][t]);
      }
    }
    for (; k < end; ++k) {
      float bk[4];
      b_at(k, bk);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const AValue x = a_one(r, k, span);
#pragma unroll
        for (int t = 0; t < 4; ++t) acc[r][t] = gl::mac(x, bk[t], acc[r][t]);
      }
    }
  };
  if (!widen) {
    sums(0, g.k, 0);
  } else {
    for (long long span = 0; span < g.k; span += KSPAN) {
      const int len = int(span + KSPAN < g.k ? KSPAN : g.k - span);
      __syncthreads();  // the previous span's readers are done
      for (int e = threadIdx.x; e < ROWS * len; e += THREADS) {
        const int r = e / len, kk = e % len;
        a_wide[kk][r] = i0 + r < g.m ? double(__ldg(a_rows + r * g.a_row + (span + kk) * g.a_col)) : 0.0;
      }
      __syncthreads();
      sums(span, span + len, span);
    }
  }
  // 16-byte stores where C's rows start on 16 bytes: a run-time test (one branch for the whole
  // kernel), so that an operand's alignment never changes the binary.
  const bool vec = ((reinterpret_cast<unsigned long long>(g.c) | (unsigned long long)(g.c_row * 4)) & 15) == 0;
  // With beta, every row's old values before the first store: read between the stores, each load
  // waited for the store before it (which may alias it), and C moved at 2.1 TB/s of 3.0 (perf-log
  // 89). Read after the sums, not before: held through them, they cost a third of the blocks.
  gl::OldRun<4> old[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) old[r] = gl::old_c_run<4>(g, i0 + r, j0, vec);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float v[4] = {float(acc[r][0]), float(acc[r][1]), float(acc[r][2]), float(acc[r][3])};
    gl::store_c_run_old<4>(g, i0 + r, j0, v, old[r], vec);
  }
}
