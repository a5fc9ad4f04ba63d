// gemmlab roofline: the hierarchical roofline of results with counters (no GPU
// needed).
#include <filesystem>
#include <memory>

#include "cli/command.hpp"
#include "gemmlab/error.hpp"
#include "report/report.hpp"

namespace gemmlab::cli {

Command add_roofline(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string out;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("roofline",
                                 "draw the hierarchical roofline of results with counters (bench --metrics roofline)");
  cmd->add_option("results", args->files, "results files with counters")->required();
  cmd->add_option("--out", args->out, "output folder")->required();
  return {cmd, [args](const Context&) -> int {
            std::vector<std::filesystem::path> files(args->files.begin(), args->files.end());
            plot_results(files, args->out, "gemmlab roofline", "", true);
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
