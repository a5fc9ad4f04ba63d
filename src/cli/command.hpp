#pragma once
// A subcommand of the command line: its options are declared when it is added
// to the app (the values live in the command's own state), and `run` carries it
// out once the arguments have parsed. main.cpp adds every command in the order
// of `gemmlab --help`, parses, and runs the one given. `run` returns the exit
// code (kExit* in gemmlab/error.hpp); it may throw UsageError (exit 2),
// NoDeviceError (3) or any other exception (4), which main.cpp reports in one
// line.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace gemmlab::cli {

struct Context {
  std::string command_line;  // "gemmlab bench ...", for the results' metadata
  std::string executable;    // this program, which sweeps and the report start again
};

struct Command {
  CLI::App* app = nullptr;
  std::function<int(const Context&)> run;
};

Command add_info(CLI::App& app);
Command add_kernels(CLI::App& app);
Command add_bench(CLI::App& app);
Command add_sweep(CLI::App& app);
Command add_tune(CLI::App& app);
Command add_plot(CLI::App& app);
Command add_report(CLI::App& app);
Command add_profile(CLI::App& app);
Command add_explain(CLI::App& app);
Command add_accuracy(CLI::App& app);
Command add_ceilings(CLI::App& app);
Command add_roofline(CLI::App& app);
Command add_stress(CLI::App& app);
Command add_choose(CLI::App& app);
Command add_overhead(CLI::App& app);

}  // namespace gemmlab::cli
