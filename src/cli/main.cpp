// gemmlab: the command line. Exit codes: 0 ok, 1 a kernel failed verification, 2 bad input,
// 3 no CUDA device, 4 a CUDA/library/I-O failure.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <tuple>

#include "cli/analysis.hpp"
#include "cli/command.hpp"
#include "bench/accuracy.hpp"
#include "bench/bench.hpp"
#include "problem/corpus.hpp"
#include "timing/ceilings.hpp"
#include "counters/counters.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "kernels/family.hpp"
#include "common/files.hpp"
#include "report/report.hpp"
#include "results/results.hpp"
#include "sweep/sweep.hpp"
#include "tune/tuner.hpp"
#include "tune/tuning.hpp"

using namespace gemmlab;

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

void print_kernels() {
  for (auto* f : families()) {
    std::printf("%s (sm_%d+): %s\n", f->name().c_str(), f->min_arch(), f->description().c_str());
    for (auto& p : f->params()) {
      std::string range;
      if (p.choices.empty()) {
        range = std::to_string(p.min) + ".." + std::to_string(p.max);
      } else {
        for (auto& c : p.choices) range += (range.empty() ? "" : "|") + c;
      }
      std::printf("  %-10s default %-12s range %-28s %s\n", p.name.c_str(), format_value(p, p.defaults).c_str(),
                  range.c_str(), p.help.c_str());
    }
    std::printf("  search space: %zu configurations\n", f->search_space().size());
  }
  std::printf("baselines: cublas (cuBLAS SGEMM, FP32), cublas-tf32 (TF32 tensor cores, lower precision), "
              "openblas (host, all cores), gemmlab (the library call, which picks its configuration)\n");
}

// A --size value, its error prefixed with the option.
std::vector<int64_t> size_option(const std::string& text, Op op) {
  try {
    return parse_shape(text, op);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--size: ") + e.what());
  }
}

std::vector<std::string> split_list(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (auto& s : in) {
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gemmlab: a lab and library for FP32 matrix products on NVIDIA GPUs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gemmlab ") + build_commit());

  auto* info = app.add_subcommand("info", "describe the GPU, its theoretical and measured ceilings");
  bool measure = false;
  info->add_flag("--measure", measure, "measure the sustained FFMA rate and copy bandwidth (cached per device)");

  auto* kernels_cmd = app.add_subcommand("kernels", "list the kernel families, their parameters and defaults");

  auto* bench = app.add_subcommand("bench", "verify and time kernels against cuBLAS and OpenBLAS");
  std::vector<std::string> kernels, sizes, params;
  std::string layout = "row", trans_a = "n", trans_b = "n", dist = "uniform", mode = "cold", csv, json;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, pad = 0;
  float alpha = 1.0f, beta = 0.0f;
  uint64_t seed = 1;
  TimingOptions timing;
  std::string op_name = "gemm";
  int64_t incx = 1, incy = 1;
  bool measure_ceilings = false;
  bench->add_option("--op", op_name, "gemm, or gemv: y = alpha*op(A)*x + beta*y with A of --size RxC")->default_val("gemm");
  bench->add_option("--kernel", kernels,
                    "kernels, comma-separated (default: naive,cublas,cublas-tf32,openblas; for gemv: cublas and every "
                    "gemv family)");
  bench->add_option("--param", params, "a parameter point of the kernel families, e.g. block=32x8; repeat for more")
      ->delimiter('\0');
  bench->add_option("--size", sizes,
                    "sizes, comma-separated: S (square) or MxNxK; for gemv S or RxC, the stored A's rows x columns "
                    "(default: 1024,2049,4096)");
  bench->add_option("--m", m, "rows of C (overrides --size); gemv: rows of A");
  bench->add_option("--n", n, "columns of C (overrides --size); gemv: columns of A");
  bench->add_option("--k", k, "inner dimension (overrides --size); not for gemv");
  bench->add_option("--incx", incx, "gemv: increment of x (only 1 is supported)")->default_val(1);
  bench->add_option("--incy", incy, "gemv: increment of y (only 1 is supported)")->default_val(1);
  bool average = false;
  std::string average_shape = "1024x1024x1024";
  bench->add_flag("--average", average, "also run seed 004's averaging pipeline, versions v1 to v5");
  bench->add_option("--average-shape", average_shape, "the pipeline's LxMxN (vector length, vectors, sets)")
      ->default_val("1024x1024x1024");
  bench->add_flag("--measure-ceilings", measure_ceilings,
                  "measure the FFMA rate and copy bandwidth in this run instead of using the cached values");
  bench->add_option("--alpha", alpha, "alpha")->default_val(1.0f);
  bench->add_option("--beta", beta, "beta (0 never reads C)")->default_val(0.0f);
  bench->add_option("--layout", layout, "row or col, or both: row,col")->default_val("row");
  bench->add_option("--trans-a,--trans", trans_a, "n or t, or both: n,t (gemv: y = A^T x with t)")->default_val("n");
  bench->add_option("--trans-b", trans_b, "n or t")->default_val("n");
  bench->add_option("--lda", lda, "leading dimension of A (default: tight)");
  bench->add_option("--ldb", ldb, "leading dimension of B (default: tight)");
  bench->add_option("--ldc", ldc, "leading dimension of C (default: tight)");
  bench->add_option("--pad", pad, "add this many elements to every tight leading dimension")->check(CLI::NonNegativeNumber);
  bench->add_option("--dist", dist, "input distribution: uniform, normal, positive, wide")->default_val("uniform");
  bench->add_option("--seed", seed, "random seed")->default_val(1);
  bench->add_option("--mode", mode, "cold (L2 flushed before each sample) or warm")->default_val("cold");
  bench->add_option("--min-samples", timing.min_samples, "minimum samples")->default_val(10)->check(CLI::PositiveNumber);
  bench->add_option("--max-time", timing.max_time_s, "seconds per measurement at most")->default_val(2.0)
      ->check(CLI::PositiveNumber);
  std::string metrics, ablate;
  bench->add_option("--metrics", metrics,
                    "hardware counters per kernel: sets (seed000, memory, compute, stalls, roofline, all), gemmlab "
                    "metrics or Nsight Compute names, comma-separated");
  bench->add_option("--ablate", ablate, "run the families with one stage left out: nostore, noload, nosmemstore "
                                        "(the result is not the product and is not verified)");
  std::string corpus, corpus_filter;
  bench->add_option("--corpus", corpus,
                    "the shapes of a corpus instead of --size: 'builtin' (experiments/corpus.txt) or a file");
  bench->add_option("--corpus-filter", corpus_filter, "only the corpus shapes whose name or group contains this");
  bench->add_option("--csv", csv, "write the results as CSV");
  bench->add_option("--json", json, "write the results as JSON");

  auto* sweep = app.add_subcommand("sweep", "run every point of an experiment file (resumable, each point isolated)");
  std::string sweep_file, sweep_out;
  bool sweep_fresh = false, sweep_worker_mode = false;
  double point_timeout = 300;
  sweep->add_option("file", sweep_file, "the experiment (JSON; see docs/experiments.md)")->required();
  sweep->add_option("--out", sweep_out, "output folder (default: results/<experiment name>)");
  sweep->add_flag("--fresh", sweep_fresh, "discard earlier results in the folder instead of resuming");
  sweep->add_option("--point-timeout", point_timeout, "seconds one point may run before it is recorded as timed out")
      ->default_val(300)->check(CLI::PositiveNumber);
  sweep->add_flag("--worker", sweep_worker_mode, "internal: run points in this process")->group("");
  std::string sweep_metrics;
  sweep->add_option("--metrics", sweep_metrics, "hardware counters per point (as bench --metrics)");

  auto* tune_cmd = app.add_subcommand("tune", "search a family's space for one problem; record the best in the tuning database");
  std::string tune_kernel, tune_size, strategy = "random", db_path;
  double budget = 0;
  uint64_t tune_seed = 1;
  std::string tune_json;
  int tune_samples = 5;
  double tune_max_time = 0.3;
  int tune_compile_threads = -1;
  tune_cmd->add_option("--kernel", tune_kernel, "the kernel family")->required();
  tune_cmd->add_option("--size", tune_size, "M,N,K (or MxNxK, or S); gemv: R,C")->required();
  tune_cmd->add_option("--op", op_name, "gemm or gemv")->default_val("gemm");
  tune_cmd->add_option("--layout", layout, "row or col")->default_val("row");
  tune_cmd->add_option("--trans", trans_a, "n or t (A; gemv: y = A^T x)")->default_val("n");
  tune_cmd->add_option("--budget", budget, "seconds the search may take (random and anneal need it)")
      ->check(CLI::NonNegativeNumber);
  tune_cmd->add_option("--strategy", strategy, "exhaustive, random or anneal")->default_val("random");
  tune_cmd->add_option("--seed", tune_seed, "random seed (inputs, search order)")->default_val(1);
  tune_cmd->add_option("--db", db_path, "the tuning database (default: $GEMMLAB_TUNING_DB or ~/.cache/gemmlab/tuning.json)");
  tune_cmd->add_option("--json", tune_json, "write every trial and the best as JSON");
  tune_cmd->add_option("--min-samples", tune_samples, "samples per configuration")->default_val(5)->check(CLI::PositiveNumber);
  tune_cmd->add_option("--compile-threads", tune_compile_threads,
                       "threads compiling the next configurations while one is measured (default: the cores less "
                       "one, or $GEMMLAB_COMPILE_THREADS; 0: compile each when it is measured)")
      ->check(CLI::NonNegativeNumber);
  tune_cmd->add_option("--max-time", tune_max_time, "seconds of timing per configuration at most")->default_val(0.3)
      ->check(CLI::PositiveNumber);

  auto* plot_cmd = app.add_subcommand("plot", "draw plots and README.md from saved results (no GPU needed)");
  std::vector<std::string> plot_files;
  std::string plot_out, plot_title = "gemmlab results";
  plot_cmd->add_option("results", plot_files, "results files (bench --json, sweep results.json)")->required();
  plot_cmd->add_option("--out", plot_out, "output folder")->required();
  plot_cmd->add_option("--title", plot_title, "title of README.md")->default_val("gemmlab results");
  std::string plot_intro;
  plot_cmd->add_option("--intro", plot_intro, "a markdown file to put after the title");

  auto* report_cmd = app.add_subcommand("report", "the default suite on GPU 0: tables and plots of this GPU in one folder");
  std::string report_out = "gemmlab-report";
  bool quick = false;
  report_cmd->add_option("--out", report_out, "output folder")->default_val("gemmlab-report");
  report_cmd->add_flag("--quick", quick, "fewer sizes (about a minute)");

  // One configuration on one problem: profile and explain.
  struct TargetArgs {
    std::string kernel, size, layout = "row", trans_a = "n", trans_b = "n", dist = "uniform", op = "gemm";
    std::vector<std::string> params;
    uint64_t seed = 1;
    float alpha = 1, beta = 0;
  };
  auto add_target = [](CLI::App* c, TargetArgs& t) {
    c->add_option("--kernel", t.kernel, "a kernel family (or cublas for profile)");
    c->add_option("--param", t.params, "the family's parameter point, e.g. block=16x16,vpt=8x8")->delimiter('\0');
    c->add_option("--size", t.size, "S or MxNxK (gemv: S or RxC)");
    c->add_option("--op", t.op, "gemm or gemv")->default_val("gemm");
    c->add_option("--layout", t.layout, "row or col")->default_val("row");
    c->add_option("--trans-a,--trans", t.trans_a, "n or t")->default_val("n");
    c->add_option("--trans-b", t.trans_b, "n or t")->default_val("n");
    c->add_option("--dist", t.dist, "input distribution")->default_val("uniform");
    c->add_option("--seed", t.seed, "random seed")->default_val(1);
    c->add_option("--alpha", t.alpha, "alpha")->default_val(1.0f);
    c->add_option("--beta", t.beta, "beta")->default_val(0.0f);
  };
  auto* profile_cmd = app.add_subcommand("profile", "hardware counters of one configuration beside cuBLAS's (seed 000's Table I)");
  TargetArgs profile_t;
  std::string profile_metrics = "seed000", profile_baseline = "cublas", profile_json;
  bool list_metrics_flag = false;
  profile_cmd->add_flag("--list-metrics", list_metrics_flag, "list the counters this GPU offers and gemmlab's metric sets");
  add_target(profile_cmd, profile_t);
  profile_cmd->add_option("--metrics", profile_metrics, "metric sets, gemmlab metrics or Nsight Compute names")
      ->default_val("seed000");
  profile_cmd->add_option("--baseline", profile_baseline, "cublas or none")->default_val("cublas");
  profile_cmd->add_option("--json", profile_json, "write the comparison as JSON");
  auto* explain_cmd = app.add_subcommand("explain", "the analytic model of one configuration, beside its counters and ablations");
  TargetArgs explain_t;
  bool explain_measure = false;
  std::string explain_json;
  add_target(explain_cmd, explain_t);
  explain_cmd->add_flag("--measure", explain_measure, "also run it on GPU 0: counters, time, and the time of each ablation");
  explain_cmd->add_option("--json", explain_json, "write prediction and measurement as JSON");
  auto* accuracy_cmd = app.add_subcommand("accuracy", "error against float64 over K and input distributions, every kernel in the same run");
  std::vector<std::string> acc_kernels, acc_params, acc_ks, acc_dists;
  int64_t acc_mn = 256;
  std::string acc_json;
  accuracy_cmd->add_option("--kernel", acc_kernels, "kernels, comma-separated (default: cublas, cublas-tf32 and the library call)");
  accuracy_cmd->add_option("--param", acc_params, "parameter points of the families")->delimiter('\0');
  accuracy_cmd->add_option("--k", acc_ks, "K values, comma-separated (default: 64,256,1024,4096,16384)");
  accuracy_cmd->add_option("--dist", acc_dists, "input distributions (default: uniform,normal,positive,wide)");
  accuracy_cmd->add_option("--mn", acc_mn, "M = N (every element is checked)")->default_val(256)->check(CLI::Range(1, 4096));
  accuracy_cmd->add_option("--json", acc_json, "write the rows as JSON");
  auto* ceilings_cmd = app.add_subcommand("ceilings", "measure the FFMA rate and the DRAM, L2 and shared-memory bandwidths");
  bool ceilings_remeasure = false;
  ceilings_cmd->add_flag("--remeasure", ceilings_remeasure, "measure again instead of using the cached values");
  auto* roofline_cmd = app.add_subcommand("roofline", "draw the hierarchical roofline of results with counters (bench --metrics roofline)");
  std::vector<std::string> roofline_files;
  std::string roofline_out;
  roofline_cmd->add_option("results", roofline_files, "results files with counters")->required();
  roofline_cmd->add_option("--out", roofline_out, "output folder")->required();

  const cli::Command commands[] = {cli::add_stress(app), cli::add_choose(app)};

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
    if (info->parsed()) {
      print_info(measure);
      return kExitOk;
    }
    if (kernels_cmd->parsed()) {
      print_kernels();
      return kExitOk;
    }
    std::string cmd = "gemmlab";
    for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
    // Workers and the report start this same program again.
    std::error_code ec;
    std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (self.empty()) self = argv[0];

    for (auto& c : commands)
      if (c.app->parsed()) return c.run(cmd);
    if (sweep->parsed()) {
      SweepOptions so;
      so.file = sweep_file;
      so.fresh = sweep_fresh;
      so.point_timeout_s = point_timeout;
      so.executable = self;
      so.command_line = cmd;
      if (!sweep_metrics.empty()) parse_metrics(sweep_metrics);  // refused here, not in every worker
      so.metrics = sweep_metrics;
      if (sweep_out.empty()) so.out = std::filesystem::path("results") / load_experiment(sweep_file).name;
      else so.out = sweep_out;
      if (sweep_worker_mode) return sweep_worker(so);
      auto s = run_sweep(so, std::cout);
      std::printf("%d points: %d ok, %d failed verification, %d invalid, %d unsupported, %d errors -> %s\n", s.points,
                  s.ok, s.failed, s.invalid, s.unsupported, s.errors, (so.out / "results.json").c_str());
      return s.failed ? kExitVerifyFailed : kExitOk;
    }
    if (tune_cmd->parsed()) {
      TuneOptions to;
      to.family = tune_kernel;
      Op op = parse_op(op_name);
      auto sz = tune_size;
      std::replace(sz.begin(), sz.end(), ',', 'x');
      auto shape = size_option(sz, op);
      to.problem = normalized(problem_of_shape(op, shape, parse_layout(layout), parse_trans(trans_a), Trans::no));
      to.strategy = parse_strategy(strategy);
      to.budget_s = budget;
      to.seed = tune_seed;
      to.db = db_path.empty() ? default_tuning_db() : std::filesystem::path(db_path);
      to.timing.min_samples = tune_samples;
      to.timing.max_time_s = tune_max_time;
      to.timing.min_time_s = 0;
      to.command_line = cmd;
      to.compile_threads = tune_compile_threads;
      check_output_path(tune_json);
      auto r = tune(to, std::cout);
      if (!tune_json.empty()) write_file_atomic(tune_json, r.to_json().dump(1) + "\n");
      auto* b = r.best();
      if (!b) {
        std::fprintf(stderr, "gemmlab: no configuration of %s passed on this problem\n", tune_kernel.c_str());
        return kExitVerifyFailed;
      }
      std::printf("best of %zu/%d configurations in %.1f s: %s, %.4f ms, %.1f GFLOP/s -> %s (class %s)\n",
                  r.trials.size(), r.space, r.elapsed_s, b->params.c_str(), b->median_ms, b->gflops, to.db.c_str(),
                  shape_class(to.problem).c_str());
      std::printf("time: %.1f s waiting for binaries, %.1f s measuring; NVRTC %.1f s on %d compile-ahead threads\n",
                  r.prepare_s, r.measure_s, r.compile_s, r.compile_threads);
      return kExitOk;
    }
    auto target_of = [&](const TargetArgs& a) {
      if (a.kernel.empty() || a.size.empty()) throw UsageError("give --kernel and --size");
      cli::Target t;
      Op op = parse_op(a.op);
      auto specs = resolve_kernels({a.kernel}, a.params);
      if (specs.size() != 1) throw UsageError("give one parameter point");
      t.kernel = specs.front();
      auto shape = size_option(a.size, op);
      Problem p = problem_of_shape(op, shape, parse_layout(a.layout), parse_trans(a.trans_a), parse_trans(a.trans_b));
      p.alpha = a.alpha;
      p.beta = a.beta;
      t.problem = normalized(p);
      t.dist = parse_distribution(a.dist);
      t.seed = a.seed;
      t.command_line = cmd;
      return t;
    };
    if (profile_cmd->parsed()) {
      if (list_metrics_flag) return cli::list_metrics();
      check_output_path(profile_json);
      return cli::run_profile(target_of(profile_t), profile_metrics, profile_baseline, profile_json);
    }
    if (explain_cmd->parsed()) {
      check_output_path(explain_json);
      return cli::run_explain(target_of(explain_t), explain_measure, explain_json);
    }
    if (ceilings_cmd->parsed()) return cli::run_ceilings(ceilings_remeasure);
    if (accuracy_cmd->parsed()) {
      AccuracyOptions ao;
      ao.kernels = resolve_kernels(acc_kernels.empty() ? std::vector<std::string>{"cublas", "cublas-tf32", "gemmlab"}
                                                       : split_list(acc_kernels),
                                   acc_params);
      if (!acc_ks.empty()) {
        ao.ks.clear();
        for (auto& k : split_list(acc_ks)) {
          size_t used = 0;
          long long v = 0;
          try {
            v = std::stoll(k, &used);
          } catch (const std::logic_error&) {
          }
          if (used != k.size() || v < 1) throw UsageError("--k: '" + k + "' is not a positive integer");
          ao.ks.push_back(v);
        }
      }
      if (!acc_dists.empty()) {
        ao.dists.clear();
        for (auto& d : split_list(acc_dists)) ao.dists.push_back(parse_distribution(d));
      }
      ao.mn = acc_mn;
      ao.command_line = cmd;
      check_output_path(acc_json);
      if (device_count() == 0) throw NoDeviceError();
      auto j = run_accuracy(ao, std::cout);
      if (!acc_json.empty()) write_file_atomic(acc_json, j.dump(1) + "\n");
      return kExitOk;
    }
    if (roofline_cmd->parsed()) {
      std::vector<std::filesystem::path> files(roofline_files.begin(), roofline_files.end());
      plot_results(files, roofline_out, "gemmlab roofline", "", true);
      return kExitOk;
    }
    if (plot_cmd->parsed()) {
      std::vector<std::filesystem::path> files(plot_files.begin(), plot_files.end());
      std::string intro;
      if (!plot_intro.empty()) {
        auto text = read_file(plot_intro);
        if (!text) throw UsageError("cannot read " + plot_intro);
        intro = *text;
      }
      plot_results(files, plot_out, plot_title, intro);
      return kExitOk;
    }
    if (report_cmd->parsed()) {
      if (device_count() == 0) throw NoDeviceError();
      ReportOptions ro;
      ro.out = report_out;
      ro.quick = quick;
      ro.executable = self;
      ro.command_line = cmd;
      return run_report(ro, std::cout) ? kExitOk : kExitVerifyFailed;
    }

    // Everything the user typed is checked before the GPU is touched.
    BenchOptions o;
    o.command_line = cmd;
    o.dist = parse_distribution(dist);
    o.seed = seed;
    timing.mode = parse_cache_mode(mode);
    timing.max_samples = std::max(timing.max_samples, timing.min_samples);
    o.timing = timing;
    Op op = parse_op(op_name);
    if (op == Op::gemv && (incx != 1 || incy != 1))
      throw UsageError("gemv supports unit increments only (--incx 1 --incy 1)");
    if (op == Op::gemv && k) throw UsageError("gemv takes --m and --n (A's rows and columns), not --k");
    if (op == Op::gemv && trans_b != "n") throw UsageError("gemv has no --trans-b");
    if (!corpus.empty()) {
      if (op != Op::gemm) throw UsageError("--corpus holds GEMM shapes: leave out --op gemv");
      if (!sizes.empty() || m || n || k || pad || lda || ldb || ldc)
        throw UsageError("--corpus gives the shapes, layouts and leading dimensions: leave out --size, --m, --n, --k, "
                         "--pad and --ld*");
      auto shapes = select_corpus(load_corpus(corpus), corpus_filter);
      if (shapes.empty()) throw UsageError("no corpus shape matches '" + corpus_filter + "'");
      for (auto& c : shapes) {
        o.problems.push_back(c.problem);
        o.labels.push_back(c.name);
      }
    }
    // Each size is the list of its dimensions: one for a square problem, else 3 (gemm) or 2 (gemv).
    std::vector<std::vector<int64_t>> shapes;
    const size_t dims = op == Op::gemm ? 3 : 2;
    for (auto& s : split_list(sizes)) shapes.push_back(size_option(s, op));
    bool explicit_dims = m || n || k;
    if (shapes.empty() && corpus.empty()) {
      if (explicit_dims && !(m && n && (k || op == Op::gemv)))
        throw UsageError(op == Op::gemm ? "give --size, or all of --m, --n and --k" : "give --size, or both --m and --n");
      if (explicit_dims)
        shapes.push_back(op == Op::gemm ? std::vector<int64_t>{m, n, k} : std::vector<int64_t>{m, n});
      else
        for (int64_t d : default_sizes()) shapes.push_back(std::vector<int64_t>(dims, d));
    }
    o.kernels = resolve_kernels(kernels.empty() ? default_kernels(op) : split_list(kernels), params);
    if (!metrics.empty()) o.metrics = parse_metrics(metrics);
    if (!ablate.empty()) {
      // Families only; each must have the ablation.
      Ablation a = parse_ablation(ablate);
      for (auto& k : o.kernels) {
        if (!k.family) continue;
        check_ablation(*k.family, k.params, a);
        k.ablation = a;
      }
    }
    o.remeasure_ceilings = measure_ceilings;
    auto pipeline = parse_averaging_shape(average_shape);
    if (average) o.averaging = pipeline;
    // Every size in every layout and transpose named (--layout row,col --trans n,t).
    std::vector<std::tuple<std::vector<int64_t>, Layout, Trans>> cases;
    for (auto& shape : shapes)
      for (auto& l : split_list({layout}))
        for (auto& t : split_list({trans_a})) cases.emplace_back(shape, parse_layout(l), parse_trans(t));
    for (auto& [shape, lay, ta] : cases) {
      // --m, --n, --k override the size's dimensions.
      for (auto [i, v] : {std::pair{0, m}, {1, n}, {2, k}})
        if (v && size_t(i) < shape.size()) shape[size_t(i)] = v;
      Problem p = problem_of_shape(op, shape, lay, ta, parse_trans(trans_b));
      p.alpha = alpha;
      p.beta = beta;
      if (pad) {
        p.lda = stored_a(normalized(p)).min_ld() + pad;
        if (op == Op::gemm) {
          p.ldb = stored_b(normalized(p)).min_ld() + pad;
          p.ldc = stored_c(normalized(p)).min_ld() + pad;
        }
      }
      if (lda) p.lda = lda;
      if (ldb) p.ldb = ldb;
      if (ldc) p.ldc = ldc;
      o.problems.push_back(normalized(p));
    }
    check_output_path(csv);
    check_output_path(json);

    auto result = run_bench(o, std::cout);
    if (!json.empty()) write_file_atomic(json, results_json(result.metadata, result.records).dump(2) + "\n");
    if (!csv.empty()) write_file_atomic(csv, results_csv(result.metadata, result.records));
    if (!result.all_passed) {
      std::fprintf(stderr, "gemmlab: verification FAILED for at least one kernel\n");
      return kExitVerifyFailed;
    }
    return kExitOk;
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
