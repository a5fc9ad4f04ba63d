// gemmlab tune: search a family's space for one problem; the best goes to the
// tuning database.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "common/files.hpp"
#include "gemmlab/error.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning.hpp"

namespace gemmlab::cli {

Command add_tune(CLI::App& app) {
  struct Args {
    std::string kernel, size, op = "gemm", layout = "row", trans = "n", strategy = "random", db, json, fixed;
    double budget = 0, max_time = 0.3;
    uint64_t seed = 1;
    int samples = 5, compile_threads = -1;
  };
  auto args = std::make_shared<Args>();
  auto& a = *args;
  auto* cmd =
      app.add_subcommand("tune", "search a family's space for one problem; record the best in the tuning database");
  cmd->add_option("--kernel", a.kernel, "the kernel family")->required();
  cmd->add_option("--size", a.size, "M,N,K (or MxNxK, or S); gemv: R,C")->required();
  cmd->add_option("--op", a.op, "gemm or gemv")->default_val("gemm");
  cmd->add_option("--layout", a.layout, "row or col")->default_val("row");
  cmd->add_option("--trans", a.trans, "n or t (A; gemv: y = A^T x)")->default_val("n");
  cmd->add_option("--budget", a.budget, "seconds the search may take (random and anneal need it)")
      ->check(non_negative());
  cmd->add_option("--strategy", a.strategy, "exhaustive, random or anneal")->default_val("random");
  cmd->add_option("--seed", a.seed, "random seed (inputs, search order)")->default_val(1);
  cmd->add_option("--db", a.db, "the tuning database (default: $GEMMLAB_TUNING_DB or ~/.cache/gemmlab/tuning.json)");
  cmd->add_option("--json", a.json, "write every trial and the best as JSON");
  cmd->add_option("--min-samples", a.samples, "samples per configuration")->default_val(5)->check(positive());
  cmd->add_option("--compile-threads", a.compile_threads,
                  "threads compiling the next configurations while one is measured (default: the cores less one, or "
                  "$GEMMLAB_COMPILE_THREADS; 0: compile each when it is measured)")
      ->check(non_negative());
  cmd->add_option("--param", a.fixed,
                  "parameters held at these values in every point, e.g. accum=fp64 (tensor_fp32's arithmetic: "
                  "the library's tensor_fp32 takes such an entry before an FP32 one)");
  cmd->add_option("--max-time", a.max_time, "seconds of timing per configuration at most")
      ->default_val(0.3)
      ->check(positive());
  return {
      cmd, [args](const Context& ctx) -> int {
        auto& a = *args;
        TuneOptions to;
        to.family = a.kernel;
        Op op = parse_op(a.op);
        auto sz = a.size;
        std::replace(sz.begin(), sz.end(), ',', 'x');
        auto shape = size_option(sz, op);
        to.problem = normalized(problem_of_shape(op, shape, parse_layout(a.layout), parse_trans(a.trans), Trans::no));
        to.strategy = parse_strategy(a.strategy);
        to.budget_s = a.budget;
        to.seed = a.seed;
        to.db = a.db.empty() ? default_tuning_db() : std::filesystem::path(a.db);
        to.timing.min_samples = a.samples;
        to.timing.max_time_s = a.max_time;
        to.timing.min_time_s = 0;
        to.command_line = ctx.command_line;
        to.compile_threads = a.compile_threads;
        to.fixed = a.fixed;
        check_output_path(a.json);
        auto r = tune(to, std::cout);
        if (!a.json.empty()) write_file_atomic(a.json, r.to_json().dump(1) + "\n");
        auto* b = r.best();
        if (!b) {
          std::fprintf(stderr, "gemmlab: no configuration of %s passed on this problem\n", a.kernel.c_str());
          return kExitVerifyFailed;
        }
        std::printf("best of %zu/%d configurations in %.1f s: %s, %.4f ms, %.1f GFLOP/s -> %s (class %s)\n",
                    r.trials.size(), r.space, r.elapsed_s, b->params.c_str(), b->median_ms, b->gflops, to.db.c_str(),
                    shape_class(to.problem).c_str());
        std::printf("time: %.1f s waiting for binaries, %.1f s measuring; NVRTC %.1f s on %d compile-ahead threads\n",
                    r.prepare_s, r.measure_s, r.compile_s, r.compile_threads);
        return kExitOk;
      }};
}

}  // namespace gemmlab::cli
