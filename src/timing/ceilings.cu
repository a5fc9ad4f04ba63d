#include <ctime>

#include "gemmlab/ceilings.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/files.hpp"
#include "gemmlab/timing.hpp"

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
  cudaFree(src);
  cudaFree(dst);
  c.measured_at = utc_now();
  return c;
}

nlohmann::json to_json(const Ceilings& c) {
  return {{"ffma_tflops", c.ffma_tflops}, {"copy_gbps", c.copy_gbps}, {"measured_at", c.measured_at}};
}

std::optional<Ceilings> cached_ceilings(const DeviceInfo& dev) {
  auto text = read_file(cache_file(dev));
  if (!text) return std::nullopt;
  try {
    auto j = nlohmann::json::parse(*text);
    Ceilings c{j.at("ffma_tflops").get<double>(), j.at("copy_gbps").get<double>(), j.at("measured_at").get<std::string>()};
    if (c.ffma_tflops > 0 && c.copy_gbps > 0) return c;
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
