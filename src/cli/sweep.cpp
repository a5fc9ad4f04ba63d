// gemmlab sweep: every point of an experiment file, resumable, each point in a
// worker process.
#include "sweep/sweep.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "counters/counters.hpp"
#include "experiment/experiment.hpp"
#include "gemmlab/error.hpp"

namespace gemmlab::cli {

Command add_sweep(CLI::App& app) {
  struct Args {
    std::string file, out, metrics;
    bool fresh = false, worker = false;
    double point_timeout = 300;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("sweep", "run every point of an experiment file (resumable, each point isolated)");
  cmd->add_option("file", args->file, "the experiment (JSON; see docs/experiments.md)")->required();
  cmd->add_option("--out", args->out, "output folder (default: results/<experiment name>)");
  cmd->add_flag("--fresh", args->fresh, "discard earlier results in the folder instead of resuming");
  cmd->add_option("--point-timeout", args->point_timeout,
                  "seconds one point may run before it is recorded as timed out")
      ->default_val(300)
      ->check(positive());
  cmd->add_flag("--worker", args->worker, "internal: run points in this process")->group("");
  cmd->add_option("--metrics", args->metrics, "hardware counters per point (as bench --metrics)");
  return {cmd, [args](const Context& ctx) -> int {
            SweepOptions so;
            so.file = args->file;
            so.fresh = args->fresh;
            so.point_timeout_s = args->point_timeout;
            so.executable = ctx.executable;
            so.command_line = ctx.command_line;
            if (!args->metrics.empty()) parse_metrics(args->metrics);  // refused here, not in every worker
            so.metrics = args->metrics;
            so.out = args->out.empty() ? std::filesystem::path("results") / load_experiment(args->file).name
                                       : std::filesystem::path(args->out);
            if (args->worker) return sweep_worker(so);
            auto s = run_sweep(so, std::cout);
            std::printf("%d points: %d ok, %d failed verification, %d invalid, %d unsupported, %d errors -> %s\n",
                        s.points, s.ok, s.failed, s.invalid, s.unsupported, s.errors,
                        (so.out / "results.json").c_str());
            return s.failed ? kExitVerifyFailed : kExitOk;
          }};
}

}  // namespace gemmlab::cli
