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
#include "device/device.hpp"
#include "gemmlab/gemmlab.hpp"
#include "kernels/family.hpp"
#include "launch/launcher.hpp"
#include "launch/runner.hpp"
#include "sweep/sweep.hpp"
#include "timing/ceilings.hpp"
#include "timing/timing.hpp"

extern char** environ;

namespace gemmlab::embedded {
extern const char* const plot_source;
extern const char* const report_sgemm_source;
extern const char* const report_heatmap_source;
extern const char* const report_steps_source;
extern const char* const report_gemv_source;
extern const char* const report_fp32_accurate_source;
extern const char* const report_layouts_source;
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
                           embedded::report_heatmap_source, embedded::report_fp32_accurate_source,
                           embedded::report_layouts_source}) {
    auto spec = json::parse(text);
    if (quick && spec.contains("quick"))
      for (auto& [k, v] : spec["quick"].items()) spec[k] = v;
    out.emplace_back(spec["name"].get<std::string>(), spec);
  }
  return out;
}

namespace {

// Host time per call of `call` (µs): 30 batches of 100 back-to-back calls, the GPU synchronised
// between batches outside the timed part (the device, since a call may run on a stream of its own);
// each entry of `calls` measured in turn per batch, so that a drift of the host's speed touches all
// alike. Median and quartiles per entry.
std::vector<json> per_call_us(const std::vector<std::function<void()>>& calls) {
  std::vector<std::vector<double>> samples(calls.size());
  for (auto& call : calls) call();
  GEMMLAB_CUDA(cudaDeviceSynchronize());
  for (int batch = 0; batch < 30; ++batch)
    for (size_t i = 0; i < calls.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      for (int n = 0; n < 100; ++n) calls[i]();
      auto t1 = std::chrono::steady_clock::now();
      samples[i].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
      GEMMLAB_CUDA(cudaDeviceSynchronize());
    }
  std::vector<json> out;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    out.push_back({{"median_us", s[s.size() / 2]}, {"q1_us", s[s.size() / 4]}, {"q3_us", s[3 * s.size() / 4]}});
  }
  return out;
}

// Kernel launches of one enqueue of `call` on `stream`: the kernel nodes of its capture.
int launches_of(const std::function<void()>& call, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  GEMMLAB_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    call();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  GEMMLAB_CUDA(cudaStreamEndCapture(stream, &graph));
  size_t n = 0;
  GEMMLAB_CUDA(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  GEMMLAB_CUDA(cudaGraphGetNodes(graph, nodes.data(), &n));
  int kernels = 0;
  for (auto node : nodes) {
    cudaGraphNodeType type;
    GEMMLAB_CUDA(cudaGraphNodeGetType(node, &type));
    kernels += type == cudaGraphNodeTypeKernel;
  }
  cudaGraphDestroy(graph);
  return kernels;
}

}  // namespace

json measure_call_overhead(const std::string& command_line) {
  cudaStream_t stream;
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t previous;
  GEMMLAB_CUDA(cudaEventCreateWithFlags(&previous, cudaEventDisableTiming));
  // The small problem, then the first candidate whose plan splits K (a workspace, two launches).
  std::vector<Problem> shapes = {normalized(Problem::square(256))};
  for (auto d : {std::vector<int64_t>{64, 64, 16384}, {128, 128, 32768}, {96, 96, 60000}}) {
    Problem p = normalized(problem_of_shape(Op::gemm, d, Layout::row_major, Trans::no, Trans::no));
    if (choose(p).workspace_bytes > 0) {
      shapes.push_back(p);
      break;
    }
  }
  json out = {{"method",
               "host time per call, median (and quartiles) of 30 batches of 100 back-to-back calls on one stream, "
               "after the first call; the library call and the same plan's launches made directly alternate batch "
               "by batch; launches counted from a stream capture of one call; stream_per_call: the same with a "
               "stream created before and destroyed after each call, in both"},
              {"shapes", json::array()}};
  auto cublas = make_cublas_runner(Precision::fp32);
  for (const Problem& p : shapes) {
    const size_t bytes = std::max({stored_a(p).elements(), stored_b(p).elements(), stored_c(p).elements()}) * 4;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    GEMMLAB_CUDA(cudaMalloc(&a, bytes));
    GEMMLAB_CUDA(cudaMalloc(&b, bytes));
    GEMMLAB_CUDA(cudaMalloc(&c, bytes));
    fill_random(a, stored_a(p), Distribution::uniform, 1, stream);
    fill_random(b, stored_b(p), Distribution::uniform, 2, stream);
    const Choice choice = choose(p);
    const KernelFamily& family = *find_family(choice.family);
    FamilyLauncher bare(family, parse_params(family, choice.params));
    LaunchPlan plan = bare.plan(p, a, b, c, /*shared_buffers=*/true, /*whole_alignment=*/true);
    std::vector<std::function<void()>> calls = {
        [&] {
          sgemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, a, p.lda, b, p.ldb, 0.0f, c, p.ldc, stream);
        },
        [&] { launch(plan, a, b, c, 1.0f, 0.0f, stream); }};
    cublas->prepare(p);
    calls.push_back([&] { cublas->run(p, {a, b, c}, stream); });
    // As programs that make a stream per request call it: the library meets a stream it has never
    // seen on every call (the stream made and destroyed around each call, in both measurements).
    // Each call waits for the one before (the direct launches share one workspace and its counters).
    auto on_new_stream = [previous](const std::function<void(cudaStream_t)>& call) {
      return [call, previous] {
        cudaStream_t s;
        GEMMLAB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        GEMMLAB_CUDA(cudaStreamWaitEvent(s, previous));
        call(s);
        GEMMLAB_CUDA(cudaEventRecord(previous, s));
        GEMMLAB_CUDA(cudaStreamDestroy(s));
      };
    };
    calls.push_back(on_new_stream([&](cudaStream_t s) {
      sgemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, a, p.lda, b, p.ldb, 0.0f, c, p.ldc, s);
    }));
    calls.push_back(on_new_stream([&](cudaStream_t s) { launch(plan, a, b, c, 1.0f, 0.0f, s); }));
    auto t = per_call_us(calls);
    json shape = {{"shape", describe(p)},
                  {"choice", choice.family + " " + choice.params},
                  {"workspace_bytes", choice.workspace_bytes},
                  {"launches", launches_of(calls[1], stream)},
                  {"gemmlab", t[0]},
                  {"bare_launches", t[1]},
                  {"cublas", t[2]},
                  {"stream_per_call", {{"gemmlab", t[3]}, {"bare_launches", t[4]}}}};
    // gemmlab's own time: what the call costs above its launches. The spread of either
    // measurement is the noise it is judged against.
    const double own = t[0]["median_us"].get<double>() - t[1]["median_us"].get<double>();
    const double noise = std::max(t[0]["q3_us"].get<double>() - t[0]["q1_us"].get<double>(),
                                  t[1]["q3_us"].get<double>() - t[1]["q1_us"].get<double>());
    shape["gemmlab_own_us"] = std::max(0.0, own);
    shape["noise_us"] = noise;
    shape["within_noise"] = std::abs(own) <= noise;
    shape["stream_per_call"]["gemmlab_own_us"] = t[3]["median_us"].get<double>() - t[4]["median_us"].get<double>();
    out["shapes"].push_back(shape);
    GEMMLAB_CUDA(cudaStreamSynchronize(stream));
    for (float* x : {a, b, c}) cudaFree(x);
  }
  cudaStreamDestroy(stream);
  cudaEventDestroy(previous);
  const auto dev = query_device(0);
  out["metadata"] =
      run_metadata(dev, cached_ceilings(dev).value_or(Ceilings{}), TimingOptions{}, Distribution::uniform, 1, command_line);
  return out;
}

std::string describe_call_overhead(const json& overhead) {
  std::string text = "**Library host overhead** (gemmlab::sgemm after the first call, against the same kernel launches "
                     "made directly; library-overhead.json):";
  char line[512];
  for (auto& s : overhead.at("shapes")) {
    const double lib = s["gemmlab"]["median_us"], bare = s["bare_launches"]["median_us"];
    const double own = s["gemmlab_own_us"], noise = s["noise_us"];
    std::string verdict;
    if (s["within_noise"].get<bool>()) {
      std::snprintf(line, sizeof line, "no difference beyond the noise (±%.2f µs)", noise);
      verdict = line;
    } else {
      std::snprintf(line, sizeof line, "%.2f µs of its own (noise ±%.2f µs)", own, noise);
      verdict = line;
    }
    const int launches = s["launches"];
    std::snprintf(line, sizeof line, "\n- %s (%s): %.2f µs per call, its %d launch%s alone %.2f µs: %s; cublasSgemm %.2f µs.",
                  s["shape"].get<std::string>().c_str(), s["choice"].get<std::string>().c_str(), lib, launches,
                  launches == 1 ? "" : "es", bare, verdict.c_str(), s["cublas"]["median_us"].get<double>());
    text += line;
    if (s.contains("stream_per_call")) {
      auto& n = s["stream_per_call"];
      std::snprintf(line, sizeof line, " A stream made and destroyed around each call: %.2f µs, its launches alone %.2f µs.",
                    n["gemmlab"]["median_us"].get<double>(), n["bare_launches"]["median_us"].get<double>());
      text += line;
    }
  }
  return text + "\n";
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
  auto overhead = measure_call_overhead(o.command_line);
  write_file_atomic(o.out / "library-overhead.json", overhead.dump(1) + "\n");

  double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
  char line[512];
  std::snprintf(line, sizeof line,
                "Made by `%s` in %.1f minutes%s. Each section below is an experiment run as a sweep; its "
                "results (JSON, CSV) are in the folder of its name, and `gemmlab plot` redraws everything from them.\n\n",
                o.command_line.c_str(), minutes, o.quick ? " (--quick)" : "");
  std::string intro = line + describe_call_overhead(overhead);
  if (!notes.empty()) intro += "\n**Not clean:**\n" + notes;
  std::string gpu = "GPU 0";
  if (auto text = read_file(results.front()))
    gpu = json::parse(*text)["metadata"]["gpu"].value("name", gpu);
  plot_results(results, o.out, "gemmlab report: " + gpu, intro);
  progress << "report: " << (o.out / "README.md").string() << " (" << minutes << " minutes)\n";
  return passed;
}

}  // namespace gemmlab
