#include "device/device.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <fstream>
#include <regex>

#include "gemmlab/error.hpp"

namespace gemmlab {

int fp32_lanes_per_sm(int major, int minor) {
  // FP32 FMA lanes per SM, from NVIDIA's architecture whitepapers.
  switch (major) {
    case 6: return minor == 0 ? 64 : 128;  // GP100 : GP10x
    case 7: return 64;                     // Volta, Turing
    case 8: return minor == 0 ? 64 : 128;  // GA100 : GA10x, Ada
    case 9: return 128;                    // Hopper
    case 10:
    case 11:
    case 12: return 128;                   // Blackwell
    default: return 0;
  }
}

double DeviceInfo::peak_fp32_tflops() const { return 2.0 * fp32_lanes_per_sm * sms * (sm_clock_khz * 1e3) / 1e12; }
double DeviceInfo::peak_dram_gbps() const { return 2.0 * (mem_clock_khz * 1e3) * (mem_bus_bits / 8.0) / 1e9; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

DeviceInfo query_device(int ordinal) {
  if (device_count() <= ordinal) throw NoDeviceError();
  cudaDeviceProp p{};
  GEMMLAB_CUDA(cudaGetDeviceProperties(&p, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = p.name;
  char uuid[40];
  int pos = 0;
  for (int i = 0; i < 16; ++i) pos += std::snprintf(uuid + pos, sizeof uuid - pos, "%02x", (unsigned char)p.uuid.bytes[i]);
  d.uuid = uuid;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sms = p.multiProcessorCount;
  GEMMLAB_CUDA(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, ordinal));
  GEMMLAB_CUDA(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  GEMMLAB_CUDA(cudaDeviceGetAttribute(&d.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal));
  d.global_mem_bytes = p.totalGlobalMem;
  d.l2_bytes = p.l2CacheSize;
  d.smem_per_sm = p.sharedMemPerMultiprocessor;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.fp32_lanes_per_sm = fp32_lanes_per_sm(p.major, p.minor);
  return d;
}

SoftwareVersions SoftwareVersions::query() {
  SoftwareVersions v;
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  cudaGetLastError();
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = major * 10000 + minor * 100 + patch;
  nvrtcVersion(&v.nvrtc_major, &v.nvrtc_minor);
  v.driver_release = "unknown";
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  std::smatch m;
  if (std::getline(f, line) && std::regex_search(line, m, std::regex(R"(\s(\d+\.\d+(\.\d+)?)\s)")))
    v.driver_release = m[1];
  return v;
}

std::string SoftwareVersions::format_cuda(int v) {
  if (v == 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"name", d.name},
          {"uuid", d.uuid},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sms", d.sms},
          {"sm_clock_mhz", d.sm_clock_khz / 1000.0},
          {"mem_clock_mhz", d.mem_clock_khz / 1000.0},
          {"mem_bus_bits", d.mem_bus_bits},
          {"global_mem_bytes", d.global_mem_bytes},
          {"l2_bytes", d.l2_bytes},
          {"smem_per_sm_bytes", d.smem_per_sm},
          {"smem_per_block_optin_bytes", d.smem_per_block_optin},
          {"regs_per_sm", d.regs_per_sm},
          {"fp32_lanes_per_sm", d.fp32_lanes_per_sm},
          {"peak_fp32_tflops", d.peak_fp32_tflops()},
          {"peak_dram_gbps", d.peak_dram_gbps()}};
}

nlohmann::json to_json(const SoftwareVersions& v) {
  auto cublas = std::to_string(v.cublas / 10000) + "." + std::to_string(v.cublas / 100 % 100) + "." +
                std::to_string(v.cublas % 100);
  return {{"driver", v.driver_release},
          {"driver_cuda", SoftwareVersions::format_cuda(v.driver)},
          {"runtime_cuda", SoftwareVersions::format_cuda(v.runtime)},
          {"cublas", cublas},
          {"nvrtc", std::to_string(v.nvrtc_major) + "." + std::to_string(v.nvrtc_minor)}};
}

}  // namespace gemmlab
