#include <algorithm>
#include <chrono>

#include "gemmlab/error.hpp"
#include "timing/timing.hpp"

namespace gemmlab {

namespace {

// ~100 µs at 2 GHz: long enough that the 32 ns (or 1 µs on older GPUs) resolution of
// %globaltimer costs at most 1% of the clock estimate.
constexpr long long kProbeCycles = 200000;
// ~20 µs of GPU work ahead of the start event in warm mode, more than a launch takes.
constexpr long long kSpinCycles = 40000;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

CacheMode parse_cache_mode(const std::string& s) {
  if (s == "cold") return CacheMode::cold;
  if (s == "warm") return CacheMode::warm;
  throw UsageError("unknown cache mode '" + s + "' (expected cold or warm)");
}

std::string to_string(CacheMode m) { return m == CacheMode::cold ? "cold" : "warm"; }

bool enough_samples(const std::vector<double>& samples_ms, double elapsed_s, const TimingOptions& o) {
  int n = int(samples_ms.size());
  if (n >= o.max_samples) return true;
  if (n >= 3 && elapsed_s >= o.max_time_s) return true;
  double total_s = 0;
  for (double x : samples_ms) total_s += x / 1e3;
  if (n < o.min_samples || total_s < o.min_time_s) return false;
  return summarize(samples_ms).spread <= o.target_spread;
}

L2Flush::L2Flush(const DeviceInfo& dev) : bytes_(std::max<size_t>(2 * size_t(dev.l2_bytes), 64u << 20)), sms_(dev.sms) {
  GEMMLAB_CUDA(cudaMalloc(&buffer_, bytes_));
  GEMMLAB_CUDA(cudaMemset(buffer_, 0, bytes_));  // zeros: the flush kernel's store is never taken
}

L2Flush::~L2Flush() { cudaFree(buffer_); }

void L2Flush::operator()(cudaStream_t s) const { launch_read_flush(s, buffer_, bytes_, sms_); }

DeviceTimer::DeviceTimer(const DeviceInfo& dev, TimingOptions opts) : dev_(dev), opts_(opts) {
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GEMMLAB_CUDA(cudaEventCreate(&start_));
  GEMMLAB_CUDA(cudaEventCreate(&stop_));
  GEMMLAB_CUDA(cudaMalloc(&probe_, 2 * sizeof(unsigned long long)));
  if (opts_.mode == CacheMode::cold) flush_ = std::make_unique<L2Flush>(dev_);
}

DeviceTimer::~DeviceTimer() {
  cudaFree(probe_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

void DeviceTimer::before_sample() {
  if (opts_.mode == CacheMode::cold)
    (*flush_)(stream_);
  else
    launch_spin(stream_, kSpinCycles);
}

double DeviceTimer::probe_mhz() {
  launch_clock_probe(stream_, probe_, kProbeCycles);
  unsigned long long r[2];
  GEMMLAB_CUDA(cudaMemcpyAsync(r, probe_, sizeof r, cudaMemcpyDeviceToHost, stream_));
  GEMMLAB_CUDA(cudaStreamSynchronize(stream_));
  return r[1] ? double(r[0]) / double(r[1]) * 1e3 : 0;
}

Timing DeviceTimer::time(const std::function<void(cudaStream_t)>& work) {
  for (int i = 0; i < opts_.warmup; ++i) work(stream_);
  GEMMLAB_CUDA(cudaStreamSynchronize(stream_));
  Timing t;
  auto t0 = Clock::now();
  while (!enough_samples(t.samples_ms, seconds_since(t0), opts_)) {
    before_sample();
    GEMMLAB_CUDA(cudaEventRecord(start_, stream_));
    work(stream_);
    GEMMLAB_CUDA(cudaEventRecord(stop_, stream_));
    GEMMLAB_CUDA(cudaEventSynchronize(stop_));
    float ms = 0;
    GEMMLAB_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    t.samples_ms.push_back(ms);
    double mhz = probe_mhz();
    t.sm_mhz.push_back(mhz);
    if (mhz < opts_.throttle_fraction * dev_.sm_clock_khz / 1e3) ++t.throttled;
  }
  t.ms = summarize(t.samples_ms);
  t.median_sm_mhz = quantile(t.sm_mhz, 0.5);
  return t;
}

Timing time_host(const std::function<void()>& work, const TimingOptions& o) {
  for (int i = 0; i < std::min(o.warmup, 1); ++i) work();
  Timing t;
  auto t0 = Clock::now();
  while (!enough_samples(t.samples_ms, seconds_since(t0), o)) {
    auto s = Clock::now();
    work();
    t.samples_ms.push_back(seconds_since(s) * 1e3);
  }
  t.ms = summarize(t.samples_ms);
  return t;
}

}  // namespace gemmlab
