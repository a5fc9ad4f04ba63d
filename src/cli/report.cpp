// gemmlab report: the default suite on GPU 0, its tables and plots in one
// folder.
#include "report/report.hpp"

#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab::cli {

Command add_report(CLI::App& app) {
  struct Args {
    std::string out = "gemmlab-report";
    bool quick = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("report", "the default suite on GPU 0: tables and plots of this GPU in one folder");
  cmd->add_option("--out", args->out, "output folder")->default_val("gemmlab-report");
  cmd->add_flag("--quick", args->quick, "fewer sizes (about a minute)");
  return {cmd, [args](const Context& ctx) -> int {
            if (device_count() == 0) throw NoDeviceError();
            ReportOptions ro;
            ro.out = args->out;
            ro.quick = args->quick;
            ro.executable = ctx.executable;
            ro.command_line = ctx.command_line;
            return run_report(ro, std::cout) ? kExitOk : kExitVerifyFailed;
          }};
}

}  // namespace gemmlab::cli
