// gemmlab info: the GPU, its theoretical and measured ceilings, and the
// software versions.
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "results/results.hpp"
#include "timing/ceilings.hpp"

namespace gemmlab::cli {

namespace {

void print_info(bool measure) {
  if (measure && device_count() == 0) throw NoDeviceError();
  auto sw = SoftwareVersions::query();
  auto swj = to_json(sw);
  std::printf("gemmlab %s\n", build_commit());
  std::printf("  driver %s (CUDA %s), runtime CUDA %s, cuBLAS %s, NVRTC %s\n", swj["driver"].get<std::string>().c_str(),
              swj["driver_cuda"].get<std::string>().c_str(), swj["runtime_cuda"].get<std::string>().c_str(),
              swj["cublas"].get<std::string>().c_str(), swj["nvrtc"].get<std::string>().c_str());
  int n = device_count();
  if (n == 0) {
    std::printf("  no CUDA device was found\n");
    return;
  }
  for (int i = 0; i < n; ++i) {
    auto d = query_device(i);
    std::printf("GPU %d: %s (compute capability %d.%d)\n", i, d.name.c_str(), d.cc_major, d.cc_minor);
    std::printf("  SMs %d, SM clock %.0f MHz, memory clock %.0f MHz, bus %d bits\n", d.sms, d.sm_clock_khz / 1e3,
                d.mem_clock_khz / 1e3, d.mem_bus_bits);
    std::printf("  memory %.1f GiB, L2 %.1f MiB\n", d.global_mem_bytes / double(1 << 30), d.l2_bytes / double(1 << 20));
    std::printf("  per SM: shared memory %zu KiB, registers %d, threads %d; shared per block (opt-in) %zu KiB\n",
                d.smem_per_sm >> 10, d.regs_per_sm, d.max_threads_per_sm, d.smem_per_block_optin >> 10);
    std::printf("  theoretical peaks: FP32 FMA %.1f TFLOP/s (%d lanes/SM), DRAM %.0f GB/s\n", d.peak_fp32_tflops(),
                d.fp32_lanes_per_sm, d.peak_dram_gbps());
    if (i == 0) {
      std::optional<Ceilings> c = measure ? std::optional(ceilings(d, true)) : cached_ceilings(d);
      if (c)
        std::printf("  measured: FFMA %.1f TFLOP/s (%.0f%% of peak), device copy %.0f GB/s (%.0f%% of peak) [%s]\n",
                    c->ffma_tflops, 100 * c->ffma_tflops / d.peak_fp32_tflops(), c->copy_gbps,
                    100 * c->copy_gbps / d.peak_dram_gbps(), c->measured_at.c_str());
      else
        std::printf("  measured ceilings: none cached yet (gemmlab info --measure)\n");
    }
  }
}

}  // namespace

Command add_info(CLI::App& app) {
  auto measure = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("info", "describe the GPU, its theoretical and measured ceilings");
  cmd->add_flag("--measure", *measure, "measure the sustained FFMA rate and copy bandwidth (cached per device)");
  return {cmd, [measure](const Context&) {
            print_info(*measure);
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
