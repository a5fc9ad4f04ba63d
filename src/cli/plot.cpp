// gemmlab plot: plots and a README.md drawn from saved results (no GPU needed).
#include <filesystem>
#include <memory>

#include "cli/command.hpp"
#include "common/files.hpp"
#include "gemmlab/error.hpp"
#include "report/report.hpp"

namespace gemmlab::cli {

Command add_plot(CLI::App& app) {
  struct Args {
    std::vector<std::string> files;
    std::string out, title = "gemmlab results", intro;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("plot", "draw plots and README.md from saved results (no GPU needed)");
  cmd->add_option("results", args->files, "results files (bench --json, sweep results.json)")->required();
  cmd->add_option("--out", args->out, "output folder")->required();
  cmd->add_option("--title", args->title, "title of README.md")->default_val("gemmlab results");
  cmd->add_option("--intro", args->intro, "a markdown file to put after the title");
  return {cmd, [args](const Context&) -> int {
            std::vector<std::filesystem::path> files(args->files.begin(), args->files.end());
            std::string intro;
            if (!args->intro.empty()) {
              auto text = read_file(args->intro);
              if (!text) throw UsageError("cannot read " + args->intro);
              intro = *text;
            }
            plot_results(files, args->out, args->title, intro);
            return kExitOk;
          }};
}

}  // namespace gemmlab::cli
