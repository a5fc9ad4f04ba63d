#include "report/report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.hpp"
#include "problem/corpus.hpp"
#include "problem/data.hpp"
#include "gemmlab/error.hpp"
#include "common/files.hpp"
#include "gemmlab/gemmlab.hpp"
#include "launch/runner.hpp"
#include "sweep/sweep.hpp"
#include "timing/timing.hpp"

extern char** environ;

namespace gemmlab::embedded {
extern const char* const plot_source;
extern const char* const report_sgemm_source;
extern const char* const report_heatmap_source;
extern const char* const report_steps_source;
extern const char* const report_gemv_source;
}  // namespace gemmlab::embedded

namespace gemmlab {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Runs a program with these arguments (no shell); its exit code, or -1 when it could not start.
int run_process(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A python3 that has matplotlib: $GEMMLAB_PYTHON, the one on PATH, or the distribution's.
std::string find_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("GEMMLAB_PYTHON"); env && *env) candidates.push_back(env);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (auto& c : candidates)
    if (run_process({c, "-c", "import matplotlib"}, true) == 0) return c;
  throw RuntimeError("plots need python3 with matplotlib (Debian/Ubuntu: apt-get install python3-matplotlib)");
}

}  // namespace

void plot_results(const std::vector<fs::path>& results, const fs::path& out, const std::string& title,
                  const std::string& intro_markdown, bool roofline) {
  for (auto& r : results) {
    auto text = read_file(r);
    if (!text) throw UsageError("cannot read results file " + r.string());
    json j;
    try {
      j = json::parse(*text);
    } catch (const json::parse_error&) {
      throw UsageError(r.string() + " is not JSON");
    }
    if (!j.is_object() || !j.contains("metadata") || !j.contains("results") || !j["results"].is_array())
      throw UsageError(r.string() + " is not a gemmlab results file (no metadata and results)");
  }
  auto python = find_python();
  std::error_code ec;
  fs::create_directories(out, ec);
  if (!fs::is_directory(out)) throw UsageError("cannot create the output folder " + out.string());
  // The script travels inside the binary; it runs from a private copy.
  auto script = cache_dir() / ("plot-" + stable_hash(embedded::plot_source) + ".py");
  if (!fs::exists(script)) write_file_atomic(script, embedded::plot_source);
  std::vector<std::string> args = {python, script.string(), "--out", out.string(), "--title", title};
  if (roofline) args.push_back("--roofline");
  fs::path intro;
  if (!intro_markdown.empty()) {
    intro = out / ".intro.md";
    write_file_atomic(intro, intro_markdown);
    args.insert(args.end(), {"--intro", intro.string()});
  }
  for (auto& r : results) args.push_back(r.string());
  int rc = run_process(args, false);
  if (!intro.empty()) fs::remove(intro, ec);
  if (rc == 2) throw UsageError("the plot script refused the results (its message is above)");
  if (rc != 0) throw RuntimeError("the plot script failed (exit code " + std::to_string(rc) + ")");
}

std::vector<std::pair<std::string, json>> report_experiments(bool quick) {
  std::vector<std::pair<std::string, json>> out;
  for (const char* text : {embedded::report_sgemm_source, embedded::report_gemv_source, embedded::report_steps_source,
                           embedded::report_heatmap_source}) {
    auto spec = json::parse(text);
    if (quick && spec.contains("quick"))
      for (auto& [k, v] : spec["quick"].items()) spec[k] = v;
    out.emplace_back(spec["name"].get<std::string>(), spec);
  }
  return out;
}

json measure_call_overhead() {
  Problem p = normalized(Problem::square(256));
  float *a = nullptr, *b = nullptr, *c = nullptr;
  size_t bytes = size_t(p.m * p.k) * sizeof(float);
  GEMMLAB_CUDA(cudaMalloc(&a, bytes));
  GEMMLAB_CUDA(cudaMalloc(&b, bytes));
  GEMMLAB_CUDA(cudaMalloc(&c, bytes));
  cudaStream_t stream;
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  fill_random(a, stored_a(p), Distribution::uniform, 1, stream);
  fill_random(b, stored_b(p), Distribution::uniform, 2, stream);
  json out = {{"shape", "256x256x256 row NN"},
              {"method", "host time of 100 back-to-back calls on one stream, per call; median of 30 batches, after "
                         "the first call; the GPU is synchronised between batches, outside the timed part"}};
  auto runners = std::vector<std::unique_ptr<GemmRunner>>();
  runners.push_back(make_library_runner());
  runners.push_back(make_cublas_runner(Precision::fp32));
  auto per_call_us = [&](const std::function<void()>& call) {
    call();
    GEMMLAB_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> per_call;
    for (int batch = 0; batch < 30; ++batch) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 100; ++i) call();
      auto t1 = std::chrono::steady_clock::now();
      per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
      GEMMLAB_CUDA(cudaStreamSynchronize(stream));
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
  };
  for (auto& r : runners) {
    r->prepare(p);
    out[r->name() + "_us"] = per_call_us([&] { r->run(p, {a, b, c}, stream); });
  }
  // What any kernel launch costs here: the part of a call that is not gemmlab's.
  out["empty_launch_us"] = per_call_us([&] { launch_spin(stream, 0); });
  // A split-K plan launches its reduce kernel too: each launch costs the empty one's time.
  auto choice = choose(p);
  auto at = choice.params.find("splitk=");
  const int launches = at != std::string::npos && std::atoi(choice.params.c_str() + at + 7) > 1 ? 2 : 1;
  out["gemmlab_choice"] = choice.family + " " + choice.params;
  out["gemmlab_launches"] = launches;
  out["gemmlab_dispatch_us"] = out["gemmlab_us"].get<double>() - launches * out["empty_launch_us"].get<double>();
  cudaStreamDestroy(stream);
  for (float* x : {a, b, c}) cudaFree(x);
  return out;
}

bool run_report(const ReportOptions& o, std::ostream& progress) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (!fs::is_directory(o.out)) throw UsageError("cannot create the output folder " + o.out.string());
  std::vector<fs::path> results;
  bool passed = true;
  std::string notes;
  for (auto& [name, spec] : report_experiments(o.quick)) {
    auto file = o.out / (name + ".experiment.json");
    write_file_atomic(file, spec.dump(1) + "\n");
    SweepOptions s;
    s.file = file;
    s.out = o.out / name;
    s.executable = o.executable;
    s.command_line = o.command_line;
    s.point_timeout_s = 120;
    // A report of another kind (--quick or not) in the same folder is replaced, not mixed in.
    auto earlier = read_file(s.out / "experiment.json");
    try {
      s.fresh = earlier && json::parse(*earlier) != spec;
    } catch (const json::parse_error&) {
      s.fresh = true;
    }
    progress << "== " << spec.value("title", name) << "\n" << std::flush;
    auto summary = run_sweep(s, progress);
    if (summary.failed) passed = false;
    if (summary.failed || summary.errors)
      notes += "- " + name + ": " + std::to_string(summary.failed) + " failed verification, " +
               std::to_string(summary.errors) + " errors (see " + name + "/results.csv)\n";
    results.push_back(s.out / "results.json");
  }

  // The library over the shape corpus in its three modes, cuBLAS SGEMM in the same run (--quick:
  // the shapes up to 2^33 multiply-adds).
  progress << "== the library over the shape corpus\n" << std::flush;
  {
    BenchOptions b;
    b.kernels = resolve_kernels({"cublas", "gemmlab", "gemmlab-tensor-fp32", "gemmlab-tf32"}, {});
    for (auto& shape : load_corpus("builtin")) {
      if (o.quick && double(shape.problem.m) * shape.problem.n * shape.problem.k > double(1ll << 33)) continue;
      b.problems.push_back(shape.problem);
      b.labels.push_back(shape.name);
    }
    b.timing.max_time_s = 0.5;
    b.command_line = o.command_line;
    auto r = run_bench(b, progress);
    if (!r.all_passed) passed = false, notes += "- library-corpus: a library call failed verification\n";
    auto meta = r.metadata;
    meta["experiment"] = {{"name", "library-corpus"},
                          {"title", "The library over the shape corpus (experiments/corpus.txt)"},
                          {"description",
                           "gemmlab::sgemm in its three modes against cuBLAS SGEMM in the same run, on the shapes "
                           "programs call: squares and their neighbours, DeepBench, transformer layers, huge and "
                           "tiny K, vectors, skinny products, every layout. The plot sorts each mode's ratios."}};
    fs::create_directories(o.out / "library-corpus", ec);
    write_file_atomic(o.out / "library-corpus" / "results.json", results_json(meta, r.records).dump(1) + "\n");
    results.push_back(o.out / "library-corpus" / "results.json");
  }

  progress << "== library host overhead\n" << std::flush;
  auto overhead = measure_call_overhead();
  write_file_atomic(o.out / "library-overhead.json", overhead.dump(1) + "\n");

  double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
  char line[768];
  std::snprintf(line, sizeof line,
                "Made by `%s` in %.1f minutes%s. Each section below is an experiment run as a sweep; its "
                "results (JSON, CSV) are in the folder of its name, and `gemmlab plot` redraws everything from them.\n\n"
                "**Library host overhead** (gemmlab::sgemm, %s, after the first call): %.2f µs per call, of which "
                "%.2f µs are its %d kernel launch(es) (an empty kernel's launch: %.2f µs) and %.2f µs gemmlab's "
                "dispatch; cublasSgemm %.2f µs in the same run (library-overhead.json).\n",
                o.command_line.c_str(), minutes, o.quick ? " (--quick)" : "", overhead["shape"].get<std::string>().c_str(),
                overhead.value("gemmlab_us", 0.0),
                overhead.value("gemmlab_launches", 1) * overhead.value("empty_launch_us", 0.0),
                overhead.value("gemmlab_launches", 1), overhead.value("empty_launch_us", 0.0),
                overhead.value("gemmlab_dispatch_us", 0.0),
                overhead.value("cublas_us", 0.0));
  std::string intro = line;
  if (!notes.empty()) intro += "\n**Not clean:**\n" + notes;
  std::string gpu = "GPU 0";
  if (auto text = read_file(results.front()))
    gpu = json::parse(*text)["metadata"]["gpu"].value("name", gpu);
  plot_results(results, o.out, "gemmlab report: " + gpu, intro);
  progress << "report: " << (o.out / "README.md").string() << " (" << minutes << " minutes)\n";
  return passed;
}

}  // namespace gemmlab
