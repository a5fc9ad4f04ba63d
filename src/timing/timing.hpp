#pragma once
// The one measurement harness every benchmark uses.
//
// Device runs are timed with CUDA events around the work of one sample. Before the start event the
// stream is given GPU work (the L2 flush in cold mode, a short spin kernel in warm mode), so the
// host has already queued the timed launch when the GPU reaches the start event: launch latency
// stays out of the sample. Samples repeat until both min_samples and min_time_s are reached, and
// stop there once the spread (relative IQR) is at most target_spread; otherwise they go on up to
// max_samples or max_time_s (at least 3 samples).
//
// Cold mode (the default) reads a buffer of max(2·L2, 64 MiB) before each sample, evicting the
// inputs from L2, as a first call on fresh data would see them. The flush reads rather than
// writes: a written flush leaves L2 full of dirty lines, and writing them back would be charged
// to the timed kernel (about L2-size bytes of extra DRAM traffic, 10 % of a 400 MB GEMV; see
// docs/perf-log.md). Warm mode reuses the buffers.
//
// After each sample a probe kernel counts clock64 cycles against %globaltimer nanoseconds; a sample
// whose SM clock is below throttle_fraction of the device's peak clock is flagged as throttled.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "device/device.hpp"
#include "timing/stats.hpp"

namespace gemmlab {

enum class CacheMode { cold, warm };
CacheMode parse_cache_mode(const std::string& s);
std::string to_string(CacheMode m);

struct TimingOptions {
  CacheMode mode = CacheMode::cold;
  int warmup = 2;
  int min_samples = 10;
  int max_samples = 200;
  double min_time_s = 0.05;
  double max_time_s = 2.0;
  double target_spread = 0.02;
  double throttle_fraction = 0.90;
};

struct Timing {
  std::vector<double> samples_ms;
  Summary ms;
  std::vector<double> sm_mhz;  // per sample; empty for host timings
  int throttled = 0;
  double median_sm_mhz = 0;
};

// The next sample is taken unless this says stop (exposed for tests).
bool enough_samples(const std::vector<double>& samples_ms, double elapsed_s, const TimingOptions& o);

// Empties L2 by reading a zero-filled buffer of max(2 x L2, 64 MiB): what was in L2 is evicted
// (dirty lines written back now), and what is left is clean. The cold-mode flush before each timing
// sample, and the flush before each counter pass (as Nsight Compute's cache control).
class L2Flush {
 public:
  explicit L2Flush(const DeviceInfo& dev);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  void operator()(cudaStream_t s) const;

 private:
  void* buffer_ = nullptr;
  size_t bytes_ = 0;
  int sms_ = 0;
};

class DeviceTimer {
 public:
  DeviceTimer(const DeviceInfo& dev, TimingOptions opts);
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;
  // `work` enqueues the work of one sample on the stream.
  Timing time(const std::function<void(cudaStream_t)>& work);
  cudaStream_t stream() const { return stream_; }

 private:
  void before_sample();
  double probe_mhz();
  DeviceInfo dev_;
  TimingOptions opts_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::unique_ptr<L2Flush> flush_;  // cold mode only
  unsigned long long* probe_ = nullptr;
};

// Host work (OpenBLAS), timed with a steady clock; no cache control, no clock probe.
Timing time_host(const std::function<void()>& work, const TimingOptions& o);

// Kernels of the harness, compiled ahead of time (src/timing/probes.cu).
void launch_spin(cudaStream_t s, long long cycles);
// Reads `bytes` of a zero-filled device buffer through the caches (the cold-mode L2 flush).
void launch_read_flush(cudaStream_t s, const void* buffer, size_t bytes, int sms);
void launch_clock_probe(cudaStream_t s, unsigned long long* out, long long cycles);
// A kernel that faults (illegal address), which loses the CUDA context: for fault-injection tests.
void launch_fault(cudaStream_t s);

}  // namespace gemmlab
