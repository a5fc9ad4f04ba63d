#include "stress/compare.hpp"

#include <cub/block/block_reduce.cuh>

#include "gemmlab/error.hpp"

namespace gemmlab {

namespace {

constexpr int kThreads = 256;

struct Partial {
  double d2 = 0, r2 = 0;
  float max_d = 0, max_r = 0;
  unsigned long long non_finite = 0;
};

struct Combine {
  __device__ Partial operator()(const Partial& a, const Partial& b) const {
    return {a.d2 + b.d2, a.r2 + b.r2, fmaxf(a.max_d, b.max_d), fmaxf(a.max_r, b.max_r), a.non_finite + b.non_finite};
  }
};

// A non-finite element must be the same kind of non-finite in both (NaN, +Inf, -Inf).
__device__ int kind(float v) { return isnan(v) ? 3 : isinf(v) ? (v > 0 ? 1 : 2) : 0; }

__global__ void compare_kernel(const float* got, const float* ref, int64_t rows, int64_t cols, int64_t ld,
                               bool row_major, CompareStats* out) {
  Partial p;
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    const int64_t at = row_major ? r * ld + c : c * ld + r;
    const float g = got[at], x = ref[at];
    if (kind(g) || kind(x)) {
      p.non_finite += kind(g) != kind(x);
      continue;
    }
    const float d = fabsf(g - x);
    p.d2 += double(d) * d;
    p.r2 += double(x) * x;
    p.max_d = fmaxf(p.max_d, d);
    p.max_r = fmaxf(p.max_r, fabsf(x));
  }
  using Reduce = cub::BlockReduce<Partial, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const Partial s = Reduce(tmp).Reduce(p, Combine{});
  if (threadIdx.x == 0) {
    atomicAdd(&out->d2, s.d2);
    atomicAdd(&out->r2, s.r2);
    // Non-negative floats order as their bit patterns.
    atomicMax(reinterpret_cast<unsigned*>(&out->max_d), __float_as_uint(s.max_d));
    atomicMax(reinterpret_cast<unsigned*>(&out->max_r), __float_as_uint(s.max_r));
    atomicAdd(&out->non_finite, s.non_finite);
  }
}

}  // namespace

void compare_on_device(const float* got, const float* ref, const StoredMatrix& c, CompareStats* device_stats,
                       cudaStream_t stream) {
  GEMMLAB_CUDA(cudaMemsetAsync(device_stats, 0, sizeof(CompareStats), stream));
  const int64_t n = c.rows * c.cols;
  const int blocks = int(std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
  compare_kernel<<<blocks, kThreads, 0, stream>>>(got, ref, c.rows, c.cols, c.ld, c.layout == Layout::row_major,
                                                  device_stats);
  GEMMLAB_CUDA_LAUNCHED();
}

}  // namespace gemmlab
