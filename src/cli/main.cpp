// gemmlab: the command line. Each subcommand lives in its own file (cli/command.hpp lists them);
// this builds the app, parses, runs the command given and turns its failure into one line and an
// exit code: 0 ok, 1 a kernel failed verification, 2 bad input, 3 no CUDA device, 4 a CUDA,
// library or I/O failure.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>

#include "cli/command.hpp"
#include "gemmlab/error.hpp"
#include "results/results.hpp"

using namespace gemmlab;

int main(int argc, char** argv) {
  CLI::App app{"gemmlab: a lab and library for FP32 matrix products on NVIDIA GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gemmlab ") + build_commit());
  // In the order of `gemmlab --help`.
  const cli::Command commands[] = {cli::add_info(app),     cli::add_kernels(app),  cli::add_bench(app),
                                   cli::add_sweep(app),    cli::add_tune(app),     cli::add_plot(app),
                                   cli::add_report(app),   cli::add_profile(app),  cli::add_explain(app),
                                   cli::add_accuracy(app), cli::add_ceilings(app), cli::add_roofline(app),
                                   cli::add_stress(app),   cli::add_choose(app),   cli::add_overhead(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gemmlab: %s (see --help)\n", e.what());
    return kExitUsage;
  }

  try {
    cli::Context ctx{"gemmlab", ""};
    for (int i = 1; i < argc; ++i) ctx.command_line += std::string(" ") + argv[i];
    // Sweeps' workers and the report start this same program again.
    std::error_code ec;
    ctx.executable = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ctx.executable.empty()) ctx.executable = argv[0];
    for (auto& c : commands)
      if (c.app->parsed()) return c.run(ctx);
    return kExitUsage;  // require_subcommand(1): one of them parsed
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gemmlab: %s\n", e.what());
    return kExitUsage;
  } catch (const NoDeviceError& e) {
    std::fprintf(stderr, "gemmlab: %s\n", e.what());
    return kExitNoDevice;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemmlab: %s\n", e.what());
    return kExitRuntime;
  }
}
