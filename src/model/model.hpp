#pragma once
// The analytic model of a configuration on a problem: the family's instruction and byte counts
// (KernelModel, beside each family), plus what follows from them and the GPU's limits: FLOPs,
// arithmetic intensity at each level, shared memory per block, theoretical occupancy and waves.
// Needs no GPU: registers come from the compiler's report.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "device/device.hpp"
#include "kernels/family.hpp"

namespace gemmlab {

struct DeviceLimits {
  std::string name;
  int sms = 0, regs_per_sm = 0, max_threads_per_sm = 0, max_blocks_per_sm = 0;
  long long smem_per_sm = 0;
  static DeviceLimits of(const DeviceInfo& d);
  static DeviceLimits h100();  // the H100 SXM's, for predictions without a GPU
};

// What ptxas reported for an entry: registers per thread and static shared memory.
struct Resources {
  int registers = -1;
  long long static_smem = 0;
};
// From an NVRTC log with ptxas's -v report; registers stay -1 when the entry is not in it.
Resources resources_from_log(const std::string& log, const std::string& entry);

struct Prediction {
  KernelModel counts;
  double flops = 0;
  double dram_bytes = 0;  // compulsory: each operand once, C written once (read too if beta ≠ 0)
  LaunchGeometry geometry;
  double blocks = 0;
  int threads = 0, registers = -1;
  long long shared_per_block = 0;
  int blocks_per_sm = 0;
  std::string occupancy_limit;  // "registers", "shared memory", "threads", "blocks"
  double occupancy = 0;         // resident warps / the SM's maximum
  double waves = 0;
  double intensity_dram = 0, intensity_global = 0, intensity_shared = 0;  // FLOP per byte
  nlohmann::ordered_json to_json() const;
};

// `p` as the user gave it (it is brought to the family's row-major form here); operands are
// taken to be 16-byte aligned.
Prediction predict(const KernelFamily& f, const ParamValues& v, const Problem& p, const DeviceLimits& dev,
                   const Resources& res);

// Blocks of `threads` threads using `registers` each and `smem` bytes that fit on one SM, and
// the resource that limits them.
int resident_blocks(const DeviceLimits& dev, int threads, int registers, long long smem, std::string* limit = nullptr);

}  // namespace gemmlab
