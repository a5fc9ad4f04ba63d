// gemv-columns: op(A) stored with its outputs contiguous (column-major A, or row-major Aᵀ): y is
// a sum of scaled columns, y += x[p]·a[:, p], and neighbouring threads take neighbouring outputs,
// so every load of A is coalesced (and 16 bytes wide when A_VEC). A block of TX × TY threads
// owns TX·VPT outputs; its TY thread rows split the reduction and meet in shared memory. Short,
// wide problems (few outputs, long reduction) also split the reduction over gridDim.z blocks;
// the last of them to finish adds the partial sums in a fixed order (deterministic, and no
// second kernel launch).
#include "gemv_common.cuh"

#ifndef A_VEC  // the variant's define: A's columns start 16-byte aligned
#define A_VEC 0
#endif

// With aligned columns a thread's outputs come in 16-byte groups; the groups of one thread
// are TX·4 apart so that each load instruction of a warp covers 512 contiguous bytes.
constexpr int kWidth = (A_VEC && VPT % 4 == 0) ? 4 : 1;
constexpr int kGroups = VPT / kWidth;
using Accumulator = gl::AccumulatorOf<ACCUM>::type;

// One reduction step of a thread whose outputs all exist: x[p] and the VPT values of A's column p.
__device__ __forceinline__ void load_step(const GemmArgs& g, long long p, const long long (&out)[kGroups], float& x,
                                          float (&a)[VPT]) {
  x = __ldg(g.b + p * g.b_row);
  const float* col = g.a + p * g.a_col;
#pragma unroll
  for (int v = 0; v < kGroups; ++v) {
    if (kWidth == 4) {
      const float4 q = load_stream(reinterpret_cast<const float4*>(col + out[v]));
      a[4 * v + 0] = q.x, a[4 * v + 1] = q.y, a[4 * v + 2] = q.z, a[4 * v + 3] = q.w;
    } else {
      a[v] = __ldcs(col + out[v]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(TX * TY) gemv_columns(GemmArgs g) {
  follow_previous_grid();
  __shared__ Accumulator partial[TY][TX * VPT];
  const long long base = (long long)blockIdx.x * TX * VPT;
  const long long chunk = (g.k + gridDim.z - 1) / gridDim.z;
  const long long p_first = (long long)blockIdx.z * chunk;
  const long long p_last = p_first + chunk < g.k ? p_first + chunk : g.k;

  Accumulator acc[VPT];
#pragma unroll
  for (int v = 0; v < VPT; ++v) acc[v] = 0;
  long long out[kGroups];
  bool full[kGroups];  // the whole group of kWidth outputs exists
#pragma unroll
  for (int v = 0; v < kGroups; ++v) {
    out[v] = base + (long long)(v * TX + threadIdx.x) * kWidth;
    full[v] = out[v] + kWidth <= g.m;
  }

  // A thread whose outputs all exist (all but an edge block's last) loads UNROLL steps before it
  // adds any. Unrolling the checked loop below did not do that: the test of each group between a
  // step's load and its FMAs kept the next step's load behind them, one load per warp in flight.
  bool whole = true;
#pragma unroll
  for (int v = 0; v < kGroups; ++v) whole = whole && full[v];
  long long p = p_first + threadIdx.y;
  if (whole)
    for (; p + (UNROLL - 1) * TY < p_last; p += UNROLL * TY) {
      float x[UNROLL], a[UNROLL][VPT];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) load_step(g, p + u * TY, out, x[u], a[u]);
      if constexpr (ACCUM == 2) {
        // fp64tile: each output's UNROLL products summed in FP32, that sum added in FP64 (dot4).
#pragma unroll
        for (int v = 0; v < VPT; ++v) {
          float run = a[0][v] * x[0];
#pragma unroll
          for (int u = 1; u < UNROLL; ++u) run = fmaf(a[u][v], x[u], run);
          acc[v] += Accumulator(run);
        }
      } else {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
          for (int v = 0; v < VPT; ++v) acc[v] = gl::mac(a[u][v], x[u], acc[v]);
      }
    }
  // The rest of the slice, and an edge thread's every step, one step at a time.
  for (; p < p_last; p += TY) {
    const float xp = __ldg(g.b + p * g.b_row);
    const float* col = g.a + p * g.a_col;
#pragma unroll
    for (int v = 0; v < kGroups; ++v) {
      if (kWidth == 4 && full[v]) {
        float4 a = load_stream(reinterpret_cast<const float4*>(col + out[v]));
        acc[4 * v + 0] = gl::mac(a.x, xp, acc[4 * v + 0]);
        acc[4 * v + 1] = gl::mac(a.y, xp, acc[4 * v + 1]);
        acc[4 * v + 2] = gl::mac(a.z, xp, acc[4 * v + 2]);
        acc[4 * v + 3] = gl::mac(a.w, xp, acc[4 * v + 3]);
      } else {
#pragma unroll
        for (int w = 0; w < kWidth; ++w)
          if (out[v] + w < g.m) acc[kWidth * v + w] = gl::mac(__ldcs(col + out[v] + w), xp, acc[kWidth * v + w]);
      }
    }
  }

#pragma unroll
  for (int v = 0; v < kGroups; ++v)
#pragma unroll
    for (int w = 0; w < kWidth; ++w) partial[threadIdx.y][(v * TX + threadIdx.x) * kWidth + w] = acc[kWidth * v + w];
  __syncthreads();
  // The TY partial sums of each output, added by the block's threads in turn: the result, or
  // with split reductions this block's share, written to the workspace.
  const int splits = gridDim.z;
  for (int o = threadIdx.y * TX + threadIdx.x; o < TX * VPT; o += TX * TY) {
    const long long i = base + o;
    if (i >= g.m) continue;
    Accumulator sum = 0;
#pragma unroll
    for (int r = 0; r < TY; ++r) sum += partial[r][o];
    if (splits == 1)
      store_y(g, i, float(sum));
    else
      gl::store_partial(g.workspace + blockIdx.z * gl::kPartialPlanes<Accumulator> * g.m + i, g.m, sum);
  }
  if (splits == 1) return;
  add_splits_if_last<Accumulator>(g, g.counters + blockIdx.x, base, TX * VPT, threadIdx.y * TX + threadIdx.x, TX * TY);
}
