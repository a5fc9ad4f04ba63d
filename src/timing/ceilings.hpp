#pragma once
// Measured ceilings of the device: the rates benchmarks are compared with.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "device/device.hpp"

namespace gemmlab {

struct Ceilings {
  double ffma_tflops = 0;  // sustained FFMA rate, 2 flops per FMA
  double copy_gbps = 0;    // device-to-device copy, bytes read plus bytes written (the DRAM ceiling)
  double l2_gbps = 0;      // reads of a buffer a quarter of L2's size, again and again
  double smem_gbps = 0;    // conflict-free 16-byte shared-memory reads, all SMs
  std::string measured_at; // UTC, ISO 8601
};

Ceilings measure_ceilings(const DeviceInfo& dev);
// From the per-device cache ($cache/ceilings-<uuid>.json); nullopt if absent or unreadable.
std::optional<Ceilings> cached_ceilings(const DeviceInfo& dev);
// The cached values, or a fresh measurement that is then cached; `remeasure` forces one.
Ceilings ceilings(const DeviceInfo& dev, bool remeasure = false);

nlohmann::json to_json(const Ceilings& c);
std::string utc_now();  // "2026-11-22T05:29:17Z"

}  // namespace gemmlab
