// gemmlab overhead: what a library call costs the host above its kernel launches, on GPU 0 (the
// report's measurement, alone).
#include <iostream>

#include "cli/command.hpp"
#include "common/files.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "report/report.hpp"

namespace gemmlab::cli {

Command add_overhead(CLI::App& app) {
  auto json_path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("overhead",
                                 "the library's host time per call on GPU 0 against the same launches made directly, "
                                 "on one stream and on a stream made per call; cublasSgemm beside it");
  cmd->add_option("--json", *json_path, "write the measurement (with the run's metadata) as JSON");
  return {cmd, [json_path](const Context& ctx) -> int {
            if (device_count() == 0) throw NoDeviceError();
            auto overhead = measure_call_overhead(ctx.command_line);
            std::cout << describe_call_overhead(overhead);
            if (!json_path->empty()) write_file_atomic(*json_path, overhead.dump(1) + "\n");
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
