#pragma once
// What the GPU is: queried from the runtime, never assumed.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gemmlab {

struct DeviceInfo {
  int ordinal = 0;
  std::string name, uuid;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  int sm_clock_khz = 0, mem_clock_khz = 0, mem_bus_bits = 0;
  size_t global_mem_bytes = 0;
  int l2_bytes = 0;
  size_t smem_per_sm = 0, smem_per_block_optin = 0;
  int regs_per_sm = 0, max_threads_per_sm = 0;
  int fp32_lanes_per_sm = 0;  // from the architecture table; 0 when unknown

  int arch() const { return cc_major * 10 + cc_minor; }
  // 2 · lanes · SMs · peak SM clock.
  double peak_fp32_tflops() const;
  // 2 (double data rate) · memory clock · bus width.
  double peak_dram_gbps() const;
};

struct SoftwareVersions {
  int driver = 0;   // CUDA version the driver supports; 0: no driver
  std::string driver_release;  // e.g. "580.159.04", from /proc/driver/nvidia/version; "unknown" if absent
  int runtime = 0;
  int cublas = 0;   // major·10000 + minor·100 + patch
  int nvrtc_major = 0, nvrtc_minor = 0;
  static SoftwareVersions query();
  static std::string format_cuda(int v);  // 13000 -> "13.0"
};

int device_count();                       // 0 without a GPU or driver; never throws
DeviceInfo query_device(int ordinal = 0);  // throws NoDeviceError when there is none
int fp32_lanes_per_sm(int cc_major, int cc_minor);

nlohmann::json to_json(const DeviceInfo& d);
nlohmann::json to_json(const SoftwareVersions& v);

}  // namespace gemmlab
