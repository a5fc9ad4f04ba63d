#include "gemmlab/error.hpp"
#include "timing/timing.hpp"

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

// Reads the whole buffer through L2 (16-byte loads, grid-stride). The store is never taken (the
// buffer holds zeros) but depends on every load, so none can be removed.
__global__ void read_flush_kernel(const float4* buf, size_t n, float* sink) {
  float acc = 0.0f;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = buf[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc != 0.0f) *sink = acc;
}

}  // namespace

void launch_read_flush(cudaStream_t s, const void* buffer, size_t bytes, int sms) {
  // The last 16 bytes of the buffer are the never-written sink.
  const size_t n = bytes / 16 - 1;
  read_flush_kernel<<<sms * 4, 512, 0, s>>>(static_cast<const float4*>(buffer), n,
                                            reinterpret_cast<float*>(static_cast<char*>(const_cast<void*>(buffer)) + n * 16));
  GEMMLAB_CUDA_LAUNCHED();
}

// Writes through a null pointer: the sweep's fault injection, to test that a lost context is survived.
__global__ void fault_kernel(float* p) { p[threadIdx.x] = 1.0f; }

void launch_fault(cudaStream_t s) {
  fault_kernel<<<1, 32, 0, s>>>(nullptr);
  GEMMLAB_CUDA_LAUNCHED();
}

void launch_spin(cudaStream_t s, long long cycles) {
  spin_kernel<<<1, 32, 0, s>>>(cycles);
  GEMMLAB_CUDA_LAUNCHED();
}

void launch_clock_probe(cudaStream_t s, unsigned long long* out, long long cycles) {
  clock_probe_kernel<<<1, 32, 0, s>>>(out, cycles);
  GEMMLAB_CUDA_LAUNCHED();
}

}  // namespace gemmlab
