#include "gemmlab/error.hpp"
#include "gemmlab/timing.hpp"

namespace gemmlab {

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// out[0] = SM cycles elapsed, out[1] = nanoseconds elapsed over the same window.
__global__ void clock_probe_kernel(unsigned long long* out, long long cycles) {
  unsigned long long t0 = global_ns();
  long long c0 = clock64(), c1;
  do {
    c1 = clock64();
  } while (c1 - c0 < cycles);
  unsigned long long t1 = global_ns();
  if (threadIdx.x == 0) {
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = t1 - t0;
  }
}

}  // namespace

void launch_spin(cudaStream_t s, long long cycles) {
  spin_kernel<<<1, 32, 0, s>>>(cycles);
  GEMMLAB_CUDA_LAUNCHED();
}

void launch_clock_probe(cudaStream_t s, unsigned long long* out, long long cycles) {
  clock_probe_kernel<<<1, 32, 0, s>>>(out, cycles);
  GEMMLAB_CUDA_LAUNCHED();
}

}  // namespace gemmlab
