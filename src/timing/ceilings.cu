#include <algorithm>
#include <ctime>

#include "timing/ceilings.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

namespace {

constexpr int kChains = 8;    // independent FMA chains per thread: more than the FMA latency in issue slots
constexpr int kUnroll = 16;
constexpr int kIters = 8192;  // ~10 ms on an H100
constexpr int kThreads = 512;

__global__ void __launch_bounds__(kThreads) ffma_kernel(float* out, float a, float b) {
  float acc[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) acc[c] = float(threadIdx.x + c);
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kChains; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c];
  if (s == 12345.678f) out[0] = s;  // keeps the chains alive; never true for these inputs
}

// Reads `n4` float4 again and again, grid-stride: once the buffer sits in L2 (it is a quarter of
// it, so no eviction), this is L2's read bandwidth. The sum is kept alive by an impossible test.
__global__ void __launch_bounds__(kThreads) l2_read_kernel(const float4* __restrict__ p, long long n4, int passes,
                                                           float* out) {
  float4 acc = make_float4(0, 0, 0, 0);
  const long long stride = (long long)gridDim.x * kThreads;
  for (int r = 0; r < passes; ++r)
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < n4; i += stride) {
      float4 v = __ldcg(p + i);  // .cg: cached in L2 only, so L1 hits cannot inflate the rate
      acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
    }
  if (acc.x + acc.y + acc.z + acc.w == 12345.678f) out[0] = acc.x;
}

constexpr int kSmemFloat4 = 2048;  // 32 KB per block
constexpr int kSmemIters = 4096;

// Each warp reads 32 consecutive float4 (512 bytes: four conflict-free wavefronts) per step. The
// step is a run-time value: with a constant one the compiler sees the addresses repeat and
// reuses loads (the first version measured twice the hardware's 128 bytes per clock per SM).
__global__ void __launch_bounds__(kThreads) smem_read_kernel(float* out, int step) {
  __shared__ float4 s[kSmemFloat4];
  for (int i = threadIdx.x; i < kSmemFloat4; i += kThreads) s[i] = make_float4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  float4 acc = make_float4(0, 0, 0, 0);
  int idx = threadIdx.x;
#pragma unroll 8
  for (int it = 0; it < kSmemIters; ++it) {
    float4 v = s[idx];
    acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
    idx = (idx + step) & (kSmemFloat4 - 1);
  }
  if (acc.x + acc.y + acc.z + acc.w == 12345.678f) out[0] = acc.x;
}

std::filesystem::path cache_file(const DeviceInfo& dev) { return cache_dir() / ("ceilings-" + dev.uuid + ".json"); }

}  // namespace

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Ceilings measure_ceilings(const DeviceInfo& dev) {
  TimingOptions o;
  o.mode = CacheMode::warm;
  o.min_samples = 10;
  o.max_samples = 30;
  DeviceTimer timer(dev, o);
  Ceilings c;

  float* out = nullptr;
  GEMMLAB_CUDA(cudaMalloc(&out, sizeof(float)));
  int blocks = dev.sms * (dev.max_threads_per_sm / kThreads);
  auto ffma = timer.time([&](cudaStream_t s) {
    ffma_kernel<<<blocks, kThreads, 0, s>>>(out, 0.999f, 0.001f);
    GEMMLAB_CUDA_LAUNCHED();
  });
  double fmas = double(blocks) * kThreads * kIters * kUnroll * kChains;
  c.ffma_tflops = 2 * fmas / (ffma.ms.median * 1e-3) / 1e12;
  cudaFree(out);

  size_t bytes = std::min<size_t>(size_t(1) << 30, dev.global_mem_bytes / 8);
  void *src = nullptr, *dst = nullptr;
  GEMMLAB_CUDA(cudaMalloc(&src, bytes));
  GEMMLAB_CUDA(cudaMalloc(&dst, bytes));
  GEMMLAB_CUDA(cudaMemset(src, 1, bytes));
  auto copy = timer.time([&](cudaStream_t s) { GEMMLAB_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); });
  c.copy_gbps = 2.0 * double(bytes) / (copy.ms.median * 1e-3) / 1e9;
  cudaFree(dst);

  // L2: a quarter of it, read 20 times per launch (the first pass brings it in).
  const long long l2_n4 = std::max(1, dev.l2_bytes / 4) / 16;
  const int passes = 20;
  const int l2_blocks = dev.sms * (dev.max_threads_per_sm / kThreads);
  GEMMLAB_CUDA(cudaMalloc(&out, sizeof(float)));
  auto l2 = timer.time([&](cudaStream_t s) {
    l2_read_kernel<<<l2_blocks, kThreads, 0, s>>>(static_cast<const float4*>(src), l2_n4, passes, out);
    GEMMLAB_CUDA_LAUNCHED();
  });
  c.l2_gbps = double(l2_n4) * 16 * passes / (l2.ms.median * 1e-3) / 1e9;
  cudaFree(src);

  const int smem_blocks = dev.sms * 4;
  auto smem = timer.time([&](cudaStream_t s) {
    smem_read_kernel<<<smem_blocks, kThreads, 0, s>>>(out, kThreads);
    GEMMLAB_CUDA_LAUNCHED();
  });
  c.smem_gbps = double(smem_blocks) * kThreads * kSmemIters * 16 / (smem.ms.median * 1e-3) / 1e9;
  cudaFree(out);
  c.measured_at = utc_now();
  return c;
}

nlohmann::json to_json(const Ceilings& c) {
  return {{"ffma_tflops", c.ffma_tflops}, {"copy_gbps", c.copy_gbps}, {"l2_gbps", c.l2_gbps},
          {"smem_gbps", c.smem_gbps}, {"measured_at", c.measured_at}};
}

std::optional<Ceilings> cached_ceilings(const DeviceInfo& dev) {
  auto text = read_file(cache_file(dev));
  if (!text) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(*text);
    Ceilings c{j.at("ffma_tflops").get<double>(), j.at("copy_gbps").get<double>(), j.value("l2_gbps", 0.0),
               j.value("smem_gbps", 0.0), j.at("measured_at").get<std::string>()};
    // A cache from before the L2 and shared-memory ceilings is measured again.
    if (c.ffma_tflops > 0 && c.copy_gbps > 0 && c.l2_gbps > 0 && c.smem_gbps > 0) return c;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

Ceilings ceilings(const DeviceInfo& dev, bool remeasure) {
  if (!remeasure)
    if (auto c = cached_ceilings(dev)) return *c;
  auto c = measure_ceilings(dev);
  write_file_atomic(cache_file(dev), to_json(c).dump(2) + "\n");
  return c;
}

}  // namespace gemmlab
