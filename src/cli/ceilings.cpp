// gemmlab ceilings: the measured FFMA rate and DRAM, L2 and shared-memory
// bandwidths.
#include "timing/ceilings.hpp"

#include <cstdio>
#include <memory>

#include "cli/command.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab::cli {

Command add_ceilings(CLI::App& app) {
  auto remeasure = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("ceilings", "measure the FFMA rate and the DRAM, L2 and shared-memory bandwidths");
  cmd->add_flag("--remeasure", *remeasure, "measure again instead of using the cached values");
  return {cmd, [remeasure](const Context&) {
            if (device_count() == 0) throw NoDeviceError();
            auto dev = query_device(0);
            auto c = ceilings(dev, *remeasure);
            std::printf(
                "%s: FFMA %.1f TFLOP/s (peak %.1f), DRAM copy %.0f GB/s (peak %.0f), L2 read %.0f GB/s, shared-memory "
                "read %.0f GB/s [%s]\n",
                dev.name.c_str(), c.ffma_tflops, dev.peak_fp32_tflops(), c.copy_gbps, dev.peak_dram_gbps(), c.l2_gbps,
                c.smem_gbps, c.measured_at.c_str());
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
