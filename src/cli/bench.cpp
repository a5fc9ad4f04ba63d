// gemmlab bench: verify and time kernels against cuBLAS and OpenBLAS on sizes,
// layouts or a corpus.
#include "bench/bench.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <tuple>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "common/files.hpp"
#include "counters/counters.hpp"
#include "gemmlab/error.hpp"
#include "problem/corpus.hpp"
#include "results/results.hpp"

namespace gemmlab::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> kernels, sizes, params;
  std::string layout = "row", trans_a = "n", trans_b = "n", dist = "uniform", mode = "cold", csv, json;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, pad = 0;
  float alpha = 1.0f, beta = 0.0f;
  uint64_t seed = 1;
  TimingOptions timing;
  std::string op = "gemm";
  int64_t incx = 1, incy = 1;
  bool measure_ceilings = false, average = false;
  std::string average_shape = "1024x1024x1024";
  std::string metrics, ablate, corpus, corpus_filter, candidates;
  int candidates_max = 8;
};

// The problems the options name: the corpus's, or every size in every layout
// and transpose named
// (--layout row,col --trans-a n,t --trans-b n,t), with --m/--n/--k, --pad and --ld* applied.
std::vector<Problem> problems_of(const BenchArgs& a, Op op, BenchOptions& o) {
  std::vector<Problem> out;
  if (!a.corpus.empty()) {
    if (op != Op::gemm) throw UsageError("--corpus holds GEMM shapes: leave out --op gemv");
    if (!a.sizes.empty() || a.m || a.n || a.k || a.pad || a.lda || a.ldb || a.ldc)
      throw UsageError(
          "--corpus gives the shapes, layouts and leading dimensions: leave out --size, --m, --n, --k, --pad and "
          "--ld*");
    auto shapes = select_corpus(load_corpus(a.corpus), a.corpus_filter);
    if (shapes.empty()) throw UsageError("no corpus shape matches '" + a.corpus_filter + "'");
    for (auto& c : shapes) {
      out.push_back(c.problem);
      o.labels.push_back(c.name);
    }
  }
  // Each size is the list of its dimensions: one for a square problem, else 3
  // (gemm) or 2 (gemv).
  std::vector<std::vector<int64_t>> shapes;
  const size_t dims = op == Op::gemm ? 3 : 2;
  for (auto& s : split_list(a.sizes)) shapes.push_back(size_option(s, op));
  const bool explicit_dims = a.m || a.n || a.k;
  if (shapes.empty() && a.corpus.empty()) {
    if (explicit_dims && !(a.m && a.n && (a.k || op == Op::gemv)))
      throw UsageError(op == Op::gemm ? "give --size, or all of --m, --n and --k" : "give --size, or both --m and --n");
    if (explicit_dims)
      shapes.push_back(op == Op::gemm ? std::vector<int64_t>{a.m, a.n, a.k} : std::vector<int64_t>{a.m, a.n});
    else
      for (int64_t d : default_sizes()) shapes.push_back(std::vector<int64_t>(dims, d));
  }
  std::vector<std::tuple<std::vector<int64_t>, Layout, Trans, Trans>> cases;
  for (auto& shape : shapes)
    for (auto& l : split_list({a.layout}))
      for (auto& ta : split_list({a.trans_a}))
        for (auto& tb : split_list({a.trans_b}))
          cases.emplace_back(shape, parse_layout(l), parse_trans(ta), parse_trans(tb));
  for (auto& [shape, lay, ta, tb] : cases) {
    // --m, --n, --k override the size's dimensions.
    for (auto [i, v] : {std::pair{0, a.m}, {1, a.n}, {2, a.k}})
      if (v && size_t(i) < shape.size()) shape[size_t(i)] = v;
    Problem p = problem_of_shape(op, shape, lay, ta, tb);
    p.alpha = a.alpha;
    p.beta = a.beta;
    if (a.pad) {
      p.lda = stored_a(normalized(p)).min_ld() + a.pad;
      if (op == Op::gemm) {
        p.ldb = stored_b(normalized(p)).min_ld() + a.pad;
        p.ldc = stored_c(normalized(p)).min_ld() + a.pad;
      }
    }
    if (a.lda) p.lda = a.lda;
    if (a.ldb) p.ldb = a.ldb;
    if (a.ldc) p.ldc = a.ldc;
    out.push_back(normalized(p));
  }
  return out;
}

int run(const BenchArgs& a, const Context& ctx) {
  // Everything the user typed is checked before the GPU is touched.
  BenchOptions o;
  o.command_line = ctx.command_line;
  o.dist = parse_distribution(a.dist);
  o.seed = a.seed;
  o.timing = a.timing;
  o.timing.mode = parse_cache_mode(a.mode);
  o.timing.max_samples = std::max(o.timing.max_samples, o.timing.min_samples);
  const Op op = parse_op(a.op);
  if (op == Op::gemv && (a.incx != 1 || a.incy != 1))
    throw UsageError("gemv supports unit increments only (--incx 1 --incy 1)");
  if (op == Op::gemv && a.k) throw UsageError("gemv takes --m and --n (A's rows and columns), not --k");
  if (op == Op::gemv && a.trans_b != "n") throw UsageError("gemv has no --trans-b");
  o.problems = problems_of(a, op, o);
  o.kernels = resolve_kernels(a.kernels.empty() ? default_kernels(op) : split_list(a.kernels), a.params);
  if (!a.metrics.empty()) o.metrics = parse_metrics(a.metrics);
  if (!a.ablate.empty()) {
    // Families only; each must have the ablation.
    Ablation ab = parse_ablation(a.ablate);
    for (auto& k : o.kernels) {
      if (!k.family) continue;
      check_ablation(*k.family, k.params, ab);
      k.ablation = ab;
    }
  }
  if (!a.candidates.empty()) {
    if (op != Op::gemm) throw UsageError("--candidates weighs GEMM configurations: leave out --op gemv");
    o.candidates = parse_math_mode(a.candidates);
    o.candidates_max = a.candidates_max;
  }
  o.remeasure_ceilings = a.measure_ceilings;
  auto pipeline = parse_averaging_shape(a.average_shape);
  if (a.average) o.averaging = pipeline;
  check_output_path(a.csv);
  check_output_path(a.json);

  auto result = run_bench(o, std::cout);
  if (!a.json.empty()) write_file_atomic(a.json, results_json(result.metadata, result.records).dump(2) + "\n");
  if (!a.csv.empty()) write_file_atomic(a.csv, results_csv(result.metadata, result.records));
  if (!result.all_passed) {
    std::fprintf(stderr, "gemmlab: verification FAILED for at least one kernel\n");
    return kExitVerifyFailed;
  }
  return kExitOk;
}

}  // namespace

Command add_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto& a = *args;
  auto* bench = app.add_subcommand("bench", "verify and time kernels against cuBLAS and OpenBLAS");
  bench->add_option("--op", a.op, "gemm, or gemv: y = alpha*op(A)*x + beta*y with A of --size RxC")
      ->default_val("gemm");
  bench->add_option(
      "--kernel", a.kernels,
      "kernels, comma-separated (default: naive,cublas,cublas-tf32,openblas; for gemv: cublas and every gemv family)");
  bench->add_option("--param", a.params, "a parameter point of the kernel families, e.g. block=32x8; repeat for more")
      ->delimiter('\0');
  bench->add_option("--size", a.sizes,
                    "sizes, comma-separated: S (square) or MxNxK; for gemv S or RxC, the stored A's rows x columns "
                    "(default: 1024,2049,4096)");
  bench->add_option("--m", a.m, "rows of C (overrides --size); gemv: rows of A");
  bench->add_option("--n", a.n, "columns of C (overrides --size); gemv: columns of A");
  bench->add_option("--k", a.k, "inner dimension (overrides --size); not for gemv");
  bench->add_option("--incx", a.incx, "gemv: increment of x (only 1 is supported)")->default_val(1);
  bench->add_option("--incy", a.incy, "gemv: increment of y (only 1 is supported)")->default_val(1);
  bench->add_flag("--average", a.average, "also run seed 004's averaging pipeline, versions v1 to v5");
  bench->add_option("--average-shape", a.average_shape, "the pipeline's LxMxN (vector length, vectors, sets)")
      ->default_val("1024x1024x1024");
  bench->add_flag("--measure-ceilings", a.measure_ceilings,
                  "measure the FFMA rate and copy bandwidth in this run instead of using the cached values");
  bench->add_option("--alpha", a.alpha, "alpha")->default_val(1.0f);
  bench->add_option("--beta", a.beta, "beta (0 never reads C)")->default_val(0.0f);
  bench->add_option("--layout", a.layout, "row or col, or both: row,col")->default_val("row");
  bench->add_option("--trans-a,--trans", a.trans_a, "n or t, or both: n,t (gemv: y = A^T x with t)")->default_val("n");
  bench->add_option("--trans-b", a.trans_b, "n or t, or both: n,t")->default_val("n");
  bench->add_option("--lda", a.lda, "leading dimension of A (default: tight)");
  bench->add_option("--ldb", a.ldb, "leading dimension of B (default: tight)");
  bench->add_option("--ldc", a.ldc, "leading dimension of C (default: tight)");
  bench->add_option("--pad", a.pad, "add this many elements to every tight leading dimension")
      ->check(non_negative());
  bench->add_option("--dist", a.dist, "input distribution: uniform, normal, positive, wide")->default_val("uniform");
  bench->add_option("--seed", a.seed, "random seed")->default_val(1);
  bench->add_option("--mode", a.mode, "cold (L2 flushed before each sample) or warm")->default_val("cold");
  bench->add_option("--min-samples", a.timing.min_samples, "minimum samples")
      ->default_val(10)
      ->check(positive());
  bench->add_option("--max-time", a.timing.max_time_s, "seconds per measurement at most")
      ->default_val(2.0)
      ->check(positive());
  bench->add_option("--metrics", a.metrics,
                    "hardware counters per kernel: sets (seed000, memory, compute, stalls, roofline, all), gemmlab "
                    "metrics or Nsight Compute names, comma-separated");
  bench->add_option("--ablate", a.ablate,
                    "run the families with one stage left out: nostore, noload, nosmemstore (the result is not the "
                    "product and is not verified)");
  bench->add_option("--corpus", a.corpus,
                    "the shapes of a corpus instead of --size: 'builtin' (experiments/corpus.txt) or a file");
  bench->add_option("--corpus-filter", a.corpus_filter, "only the corpus shapes whose name or group contains this");
  bench->add_option("--candidates", a.candidates,
                    "also run the configurations the library's model weighs in this math mode (strict_fp32, "
                    "tensor_fp32, tf32), each at its split, with its predicted time in the record");
  bench->add_option("--candidates-max", a.candidates_max, "the fastest predicted candidates to run")
      ->default_val(8)
      ->check(positive());
  bench->add_option("--csv", a.csv, "write the results as CSV");
  bench->add_option("--json", a.json, "write the results as JSON");
  return {bench, [args](const Context& ctx) { return run(*args, ctx); }};
}

}  // namespace gemmlab::cli
