// The averaging pipeline of seed 004, in its five versions. For each k < N: y_k = W · mean of
// the M vectors of set k, each of length L. Set k is stored L × M row-major (vector i is column
// i: element j at in[k·M·L + j·M + i], the seed's layout); W is L × L row-major; the outputs
// form the L × N row-major matrix out (y_k is column k). The versions differ in how threads
// are laid over this work, which is the lesson.
#include "gemv_common.cuh"

struct AveragingArgs {
  const float* in;
  const float* w;
  float* out;
  float* means;  // v1: N × L scratch; v5: the L × N matrix of means, the GEMM's right operand
  long long L, M, N;
};

// v1: one thread per set k does everything. Its loads walk its own set contiguously, but the
// threads of a warp are a whole set (4 MiB) apart: no coalescing, and only N threads in all.
extern "C" __global__ void average_v1(AveragingArgs a) {
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= a.N) return;
  const float* set = a.in + k * a.M * a.L;
  float* mean = a.means + k * a.L;
  for (long long j = 0; j < a.L; ++j) {
    float s = 0.0f;
    for (long long i = 0; i < a.M; ++i) s += set[j * a.M + i];
    mean[j] = s / a.M;
  }
  for (long long i = 0; i < a.L; ++i) {
    float s = 0.0f;
    for (long long j = 0; j < a.L; ++j) s = fmaf(a.w[i * a.L + j], mean[j], s);
    a.out[i * a.N + k] = s;
  }
}

// v2 to v4 share the first phase: a block per set; each warp takes rows j of the set in turn
// and its lanes stride along the row (a warp-stride loop: coalesced), then a warp-shuffle sum.
// The means stay in shared memory for the matrix-vector phase.
__device__ __forceinline__ void block_means(const AveragingArgs& a, float* mean) {
  const float* set = a.in + (long long)blockIdx.x * a.M * a.L;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (long long j = warp; j < a.L; j += WARPS) {
    float s = 0.0f;
    for (long long i = lane; i < a.M; i += 32) s += set[j * a.M + i];
    s = group_sum(s);
    if (lane == 0) mean[j] = s / a.M;
  }
  __syncthreads();
}

// v2: warp-stride averaging; the matrix-vector phase gives each thread whole rows of W, so a
// warp's loads of W are L floats apart (uncoalesced; W is small enough to live in L2).
extern "C" __global__ void __launch_bounds__(WARPS * 32) average_v2(AveragingArgs a) {
  extern __shared__ float mean[];
  block_means(a, mean);
  for (long long i = threadIdx.x; i < a.L; i += WARPS * 32) {
    float s = 0.0f;
    for (long long j = 0; j < a.L; ++j) s = fmaf(a.w[i * a.L + j], mean[j], s);
    a.out[i * a.N + blockIdx.x] = s;
  }
}

// v3: each row of W is read by the whole block (coalesced) and reduced with the classic
// shared-memory sweep: log2(threads) halving steps, a barrier after each.
extern "C" __global__ void __launch_bounds__(WARPS * 32) average_v3(AveragingArgs a) {
  extern __shared__ float mean[];
  __shared__ float sweep[WARPS * 32];
  block_means(a, mean);
  for (long long i = 0; i < a.L; ++i) {
    float s = 0.0f;
    for (long long j = threadIdx.x; j < a.L; j += WARPS * 32) s = fmaf(a.w[i * a.L + j], mean[j], s);
    sweep[threadIdx.x] = s;
    __syncthreads();
    for (int half = WARPS * 16; half > 0; half >>= 1) {
      if (threadIdx.x < half) sweep[threadIdx.x] += sweep[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) a.out[i * a.N + blockIdx.x] = sweep[0];
    __syncthreads();  // sweep[0] is read before the next row overwrites it
  }
}

// v4: v3 with the sweep replaced by a two-stage warp-shuffle reduction (two barriers per row
// instead of log2(threads) + 2, and no shared-memory traffic but the per-warp sums).
extern "C" __global__ void __launch_bounds__(WARPS * 32) average_v4(AveragingArgs a) {
  extern __shared__ float mean[];
  __shared__ float scratch[32];
  block_means(a, mean);
  for (long long i = 0; i < a.L; ++i) {
    float s = 0.0f;
    for (long long j = threadIdx.x; j < a.L; j += WARPS * 32) s = fmaf(a.w[i * a.L + j], mean[j], s);
    s = block_sum<WARPS * 32>(s, scratch);
    if (threadIdx.x == 0) a.out[i * a.N + blockIdx.x] = s;
  }
}

// v5, first kernel: only the averaging, written as the L × N matrix of means for one GEMM
// out = W · means. Each warp owns rows of the sets; 16-byte streaming loads, UNROLL in flight
// per lane (dot_row against a vector of ones would cost a second stream; this sums directly).
extern "C" __global__ void __launch_bounds__(WARPS * 32) average_v5(AveragingArgs a) {
  const int lane = threadIdx.x & 31;
  const long long rows = a.N * a.L;  // row r = k·L + j of the whole input
  for (long long r = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5); r < rows; r += (long long)gridDim.x * WARPS) {
    const float* row = a.in + r * a.M;
    float s = 0.0f;
    if ((a.M & 3) == 0) {
      const float4* row4 = reinterpret_cast<const float4*>(row);
      const long long n4 = a.M >> 2;
      long long q = lane;
      for (; q + (UNROLL - 1) * 32 < n4; q += UNROLL * 32) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = load_stream(row4 + q + u * 32);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
      }
      for (; q < n4; q += 32) {
        float4 v = load_stream(row4 + q);
        s += (v.x + v.y) + (v.z + v.w);
      }
    } else {
      for (long long i = lane; i < a.M; i += 32) s += __ldcs(row + i);
    }
    s = group_sum(s);
    if (lane == 0) a.means[(r % a.L) * a.N + r / a.L] = s / a.M;
  }
}
