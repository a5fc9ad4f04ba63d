// Device building blocks of the GEMV families: y = alpha·op(A)·x + beta·y in GemmArgs form,
// m outputs and a reduction of length k; element (i, p) of op(A) is a[i*a_row + p*a_col]. x and
// y are the one-column B and C, so their increments are b_row and c_row (1 for a BLAS GEMV with
// unit increments; the library's route of an SGEMM with M = 1 or N = 1 may have others).
#pragma once
#include "accumulate.cuh"
#include "gemm_args.h"
#include "grid_dependency.cuh"

__device__ __forceinline__ float a_at(const GemmArgs& g, long long i, long long p) {
  return g.a[i * g.a_row + p * g.a_col];
}

__device__ __forceinline__ float x_at(const GemmArgs& g, long long p) { return g.b[p * g.b_row]; }

__device__ __forceinline__ void store_y(const GemmArgs& g, long long i, float acc) {
  float* y = g.c + i * g.c_row;
  // beta = 0 must not read y: it may hold NaN.
  *y = g.beta == 0.0f ? g.alpha * acc : g.alpha * acc + g.beta * *y;
}

// Sum over the WIDTH lanes of an aligned lane group (WIDTH a power of two ≤ 32); every lane of
// the group gets the result. Butterfly (xor) shuffles need no shared memory and no barrier.
template <int NWIDTH = 32, class T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
  for (int o = NWIDTH / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, NWIDTH);
  return v;
}

// Two-stage block reduction: warp shuffles, one partial per warp through shared memory, then
// warp 0's shuffles. Every thread of the block gets the sum. `scratch` holds 32 values; the
// leading barrier lets a loop call this again without a race on it.
template <int NTHREADS, class T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
  v = group_sum(v);
  if (NTHREADS <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  return group_sum(lane < NTHREADS / 32 ? scratch[lane] : T(0));
}

// ACCUM 2 (fp64tile): a 16-byte group's four products summed in FP32, that sum added in FP64. FP64
// sums of every product convert both operands of each (two F2F.F64 a product, a pipe of 16 a clock
// per SM), and ran 4-10 % behind FP32 sums on memory-bound GEMVs (perf-log 110); grouped, one
// conversion per four products, and FP32 rounds four products, not all of K.
template <class Acc>
__device__ __forceinline__ Acc dot4(float4 a, float4 b, Acc acc) {
  if constexpr (ACCUM == 2) return acc + Acc(fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, a.x * b.x))));
  return gl::mac(a.w, b.w, gl::mac(a.z, b.z, gl::mac(a.y, b.y, gl::mac(a.x, b.x, acc))));
}

// A streaming 16-byte load: A is read exactly once, so it should not evict x from the caches.
__device__ __forceinline__ float4 load_stream(const float4* p) { return __ldcs(p); }

template <bool X_ALIGNED>
__device__ __forceinline__ float4 load_x4(const float* x) {
  if (X_ALIGNED) return __ldg(reinterpret_cast<const float4*>(x));
  return make_float4(__ldg(x), __ldg(x + 1), __ldg(x + 2), __ldg(x + 3));
}

template <int NLANES, int NUNROLL, bool X_ALIGNED, class Acc>
__device__ __forceinline__ Acc dot_body(const float4* row4, const float* x, long long n4, int lane, Acc acc) {
  long long q = lane;
  // NUNROLL independent 16-byte loads are issued before the first use: bytes in flight per
  // thread, which is what a memory-bound loop needs to cover DRAM latency.
  for (; q + (NUNROLL - 1) * NLANES < n4; q += NUNROLL * NLANES) {
    float4 a[NUNROLL];
#pragma unroll
    for (int u = 0; u < NUNROLL; ++u) a[u] = load_stream(row4 + q + u * NLANES);
#pragma unroll
    for (int u = 0; u < NUNROLL; ++u) acc = dot4(a[u], load_x4<X_ALIGNED>(x + 4 * (q + u * NLANES)), acc);
  }
  for (; q < n4; q += NLANES) acc = dot4(load_stream(row4 + q), load_x4<X_ALIGNED>(x + 4 * q), acc);
  return acc;
}

// This lane's part of the dot product of a contiguous row of length k with x, shared by NLANES
// lanes. A row that does not start on 16 bytes (odd leading dimension, offset pointer) has its
// first elements peeled off so that the rest is read with 16-byte loads; x is then read at the
// same offsets, which are 16-byte aligned only if x and the row are equally misaligned. Acc: the
// accumulators' type (accumulate.cuh).
template <int NLANES, int NUNROLL, class Acc = float>
__device__ __forceinline__ Acc dot_row(const float* row, const float* x, long long k, int lane, long long incx = 1) {
  if (incx != 1) {  // a strided x has no wide loads: the row keeps its coalesced 4-byte ones
    Acc acc = 0;
    for (long long p = lane; p < k; p += NLANES) acc = gl::mac(__ldcs(row + p), __ldg(x + p * incx), acc);
    return acc;
  }
  const int misaligned = int((reinterpret_cast<unsigned long long>(row) >> 2) & 3);
  const long long head = misaligned ? (4 - misaligned < k ? 4 - misaligned : k) : 0;
  Acc acc = 0;
  for (int p = lane; p < head; p += NLANES) acc = gl::mac(row[p], x[p], acc);
  const long long n4 = (k - head) >> 2;
  const float4* row4 = reinterpret_cast<const float4*>(row + head);
  const float* xs = x + head;
  if ((reinterpret_cast<unsigned long long>(xs) & 15) == 0)
    acc = dot_body<NLANES, NUNROLL, true>(row4, xs, n4, lane, acc);
  else
    acc = dot_body<NLANES, NUNROLL, false>(row4, xs, n4, lane, acc);
  for (long long p = head + 4 * n4 + lane; p < k; p += NLANES) acc = gl::mac(row[p], x[p], acc);
  return acc;
}

// A reduction split over gridDim.z blocks, each of which has written its partial sums to the
// workspace ([split][m]): the arrival of one block, true in the group's last, whose reads then see
// every block's sums. The first fence makes this block's sums visible before its arrival is
// counted. Called by every thread of the block.
__device__ inline bool last_to_arrive(unsigned* arrivals, int tid) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (tid == 0) last = atomicAdd(arrivals, 1u) == unsigned(gridDim.z - 1);
  __syncthreads();
  if (last) __threadfence();
  return last;
}
// The end of such a reduction for outputs [base, base + count): the last block to arrive adds the
// partial sums in split order (the result does not depend on which block is last), stores y and
// leaves its arrival counter zero for the next call. Called by every thread of the block; the
// partial sums are added in the accumulators' type.
template <class Acc = float>
__device__ inline void add_splits_if_last(const GemmArgs& g, unsigned* arrivals, long long base, int count, int tid,
                                          int nthreads) {
  const int splits = gridDim.z;
  if (!last_to_arrive(arrivals, tid)) return;
  for (int o = tid; o < count; o += nthreads) {
    const long long i = base + o;
    if (i >= g.m) continue;
    Acc sum = 0;
    for (int s = 0; s < splits; ++s) sum += gl::partial_at<Acc>(g.workspace + s * gl::kPartialPlanes<Acc> * g.m + i, g.m);
    store_y(g, i, float(sum));
  }
  if (tid == 0) *arrivals = 0;
}
