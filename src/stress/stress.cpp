#include "stress/stress.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <ostream>
#include <thread>

#include "bench/bench.hpp"
#include "timing/ceilings.hpp"
#include "problem/data.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "launch/runner.hpp"
#include "verify/verify.hpp"
#include "library/dispatch.hpp"
#include "stress/compare.hpp"

namespace gemmlab {

namespace {

using Clock = std::chrono::steady_clock;

// gemmlab against cuBLAS SGEMM on the same data: FP32 modes differ by rounding only (about 1e-6 of
// the result's norm), TF32 by its 10-bit operands (about 1e-3). A wrong product, a lost or stale
// partial sum, or a read of another call's data is off by tens of percent.
struct Tolerance {
  double rel, max;
};
Tolerance tolerance_of(MathMode m) { return m == MathMode::tf32 ? Tolerance{2e-2, 5e-2} : Tolerance{1e-4, 1e-3}; }

Distribution draw_distribution(uint64_t x) {
  static const Distribution all[] = {Distribution::uniform, Distribution::normal, Distribution::positive,
                                     Distribution::wide};
  return all[x % 4];
}

// One call's device buffers, stream-ordered: allocated, filled and freed on the call's stream, as
// programs using cudaMallocAsync do, so that the next call may get the same memory back.
struct CallBuffers {
  cudaStream_t s;
  float *a = nullptr, *b = nullptr, *c = nullptr, *ref = nullptr, *c0 = nullptr;
  CallBuffers(const StressCase& sc, cudaStream_t stream) : s(stream) {
    const Problem& p = sc.problem;
    auto alloc = [&](float*& x, int64_t elements) {
      GEMMLAB_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&x), size_t(elements) * sizeof(float), s));
    };
    alloc(a, stored_a(p).elements() + sc.offset_a);
    alloc(b, stored_b(p).elements() + sc.offset_b);
    alloc(c, stored_c(p).elements() + sc.offset_c);
    alloc(ref, stored_c(p).elements());
    if (p.beta != 0.0f) alloc(c0, stored_c(p).elements());
  }
  ~CallBuffers() {
    for (float* x : {a, b, c, ref, c0})
      if (x) cudaFreeAsync(x, s);
  }
};

std::vector<float> to_host(const float* x, int64_t elements, cudaStream_t s) {
  std::vector<float> h(static_cast<size_t>(elements));
  GEMMLAB_CUDA(cudaMemcpyAsync(h.data(), x, h.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
  GEMMLAB_CUDA(cudaStreamSynchronize(s));
  return h;
}

// Which side is wrong: float64 at the elements where the two differ most.
std::string judge(const StressCase& sc, const CallBuffers& buf, cudaStream_t s) {
  const Problem& p = sc.problem;
  auto sc_ = stored_c(p);
  auto ha = to_host(buf.a + sc.offset_a, stored_a(p).elements(), s);
  auto hb = to_host(buf.b + sc.offset_b, stored_b(p).elements(), s);
  auto got = to_host(buf.c + sc.offset_c, sc_.elements(), s);
  auto want = to_host(buf.ref, sc_.elements(), s);
  std::vector<float> hc0;
  if (buf.c0) hc0 = to_host(buf.c0, sc_.elements(), s);
  Reference r(p, ha.data(), hb.data(), hc0.empty() ? nullptr : hc0.data());
  std::vector<std::pair<double, std::pair<int64_t, int64_t>>> worst;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      const int64_t at = sc_.at(i, j);
      const double d = std::isfinite(got[size_t(at)]) ? std::fabs(double(got[size_t(at)]) - want[size_t(at)]) : INFINITY;
      worst.push_back({d, {i, j}});
    }
  const size_t shown = std::min<size_t>(4, worst.size());
  std::partial_sort(worst.begin(), worst.begin() + long(shown), worst.end(),
                    [](auto& x, auto& y) { return x.first > y.first; });
  int gemmlab_worse = 0;
  std::string detail;
  for (size_t w = 0; w < shown; ++w) {
    auto [i, j] = worst[w].second;
    const int64_t at = sc_.at(i, j);
    const double v = r.value(i, j), scale = std::max(r.scale(i, j), 1e-300);
    const double eg = std::fabs(got[size_t(at)] - v) / scale, ec = std::fabs(want[size_t(at)] - v) / scale;
    gemmlab_worse += !(eg <= ec);
    char line[200];
    std::snprintf(line, sizeof line, "%s(%lld,%lld): gemmlab %.6g, cuBLAS %.6g, float64 %.6g", w ? "; " : "",
                  (long long)i, (long long)j, double(got[size_t(at)]), double(want[size_t(at)]), v);
    detail += line;
  }
  return std::string(gemmlab_worse * 2 > int(shown) ? "gemmlab is wrong" : "cuBLAS is wrong") + ": " + detail;
}

struct Shared {
  const StressOptions& o;
  Clock::time_point deadline;
  std::atomic<int64_t> claimed{0}, calls{0}, verified{0}, exceptions{0};
  std::atomic<size_t> peak{0};
  std::mutex mu;
  std::vector<StressMismatch> mismatches;
  std::vector<std::string> errors;
  std::vector<std::unique_ptr<GemmRunner>> cublas;
  nlohmann::ordered_json by_route = nlohmann::ordered_json::object(), by_mode = nlohmann::ordered_json::object();
  explicit Shared(const StressOptions& opt) : o(opt) {}
  bool more() {
    if (o.seconds > 0 && Clock::now() >= deadline) return false;
    if (o.calls > 0 && claimed.fetch_add(1) >= o.calls) return false;
    return exceptions.load() < 100;  // a broken context fails every call: stop and report
  }
};

void stress_thread(Shared& sh, StressGenerator& gen, int t, int stream_index, cudaStream_t stream, const GpuModel& gpu) {
  const StressOptions& o = sh.o;
  // cuBLAS's handle is destroyed after every thread is done: cublasDestroy synchronizes the device,
  // which would break another thread's stream capture.
  GemmRunner* cublas = nullptr;
  {
    std::lock_guard lock(sh.mu);
    sh.cublas.push_back(make_cublas_runner(Precision::fp32));
    cublas = sh.cublas.back().get();
  }
  std::vector<std::unique_ptr<GemmRunner>> library;
  for (auto m : {MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32}) library.push_back(make_library_runner(m));
  cudaStream_t capture = nullptr;  // a thread's own stream for captures: a shared one would capture others' work
  cudaEvent_t fork = nullptr;
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  GEMMLAB_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CompareStats* dstats = nullptr;
  CompareStats* hstats = nullptr;
  GEMMLAB_CUDA(cudaMalloc(&dstats, sizeof(CompareStats)));
  GEMMLAB_CUDA(cudaMallocHost(&hstats, sizeof(CompareStats)));
  std::mt19937_64 rng(o.seed * 104729 + uint64_t(t));
  constexpr int64_t kPool = int64_t(1) << 25;  // 128 MiB of host values per thread
  std::vector<float> pool;
  for (int64_t index = 0; sh.more(); ++index) {
    // With stream_per_call, a stream made for the call and destroyed after it.
    cudaStream_t s = stream;
    if (o.stream_per_call) GEMMLAB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    StressCase sc = gen.next();
    if (!o.shapes.empty()) {
      sc.problem = o.shapes[size_t(rng() % o.shapes.size())];
      sc.kind = StressKind::large;
      sc.offset_a = sc.offset_b = sc.offset_c = 0;
      sc.in_graph = false;
    }
    const Problem& p = sc.problem;
    const std::string route = stress_route(sc, gpu);
    std::string plan;
    try {
      CallBuffers buf(sc, s);
      const uint64_t seed = rng();
      const Distribution dist = draw_distribution(seed >> 60);
      if (o.host_inputs) {
        // A window at a random place of the thread's pool of random values: new data every call
        // without generating it on the host each time.
        if (pool.empty()) pool = random_host(StoredMatrix{1, kPool, kPool, Layout::row_major}, dist, seed);
        for (auto [x, m] : {std::pair{buf.a + sc.offset_a, stored_a(p)}, {buf.b + sc.offset_b, stored_b(p)}}) {
          const size_t n = size_t(m.elements());
          if (n > pool.size()) throw UsageError("--host-inputs: an operand larger than the pool");
          const size_t at = size_t(rng() % (pool.size() - n + 1));
          GEMMLAB_CUDA(cudaMemcpyAsync(x, pool.data() + at, n * sizeof(float), cudaMemcpyHostToDevice, s));
        }
      } else {
        fill_random(buf.a + sc.offset_a, stored_a(p), dist, seed, s);
        fill_random(buf.b + sc.offset_b, stored_b(p), dist, seed + 1, s);
      }
      const auto cs = stored_c(p);
      if (buf.c0) {
        fill_random(buf.c0, cs, dist, seed + 2, s);
        GEMMLAB_CUDA(cudaMemcpyAsync(buf.c + sc.offset_c, buf.c0, size_t(cs.elements()) * 4, cudaMemcpyDeviceToDevice, s));
        GEMMLAB_CUDA(cudaMemcpyAsync(buf.ref, buf.c0, size_t(cs.elements()) * 4, cudaMemcpyDeviceToDevice, s));
      } else {
        poison(buf.c + sc.offset_c, cs.elements(), s);
        poison(buf.ref, cs.elements(), s);
      }
      GemmRunner& lib = *library[size_t(sc.mode)];
      const Operands ops{buf.a + sc.offset_a, buf.b + sc.offset_b, buf.c + sc.offset_c};
      if (sc.in_graph) {
        GEMMLAB_CUDA(cudaEventRecord(fork, s));
        GEMMLAB_CUDA(cudaStreamWaitEvent(capture, fork));
        cudaGraph_t graph = nullptr;
        GEMMLAB_CUDA(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
        try {
          lib.run(p, ops, capture);
        } catch (...) {
          cudaStreamEndCapture(capture, &graph);
          if (graph) cudaGraphDestroy(graph);
          throw;
        }
        GEMMLAB_CUDA(cudaStreamEndCapture(capture, &graph));
        cudaGraphExec_t exec = nullptr;
        cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        GEMMLAB_CUDA(e);
        e = cudaGraphLaunch(exec, s);
        cudaGraphExecDestroy(exec);  // freed once the launch completes
        GEMMLAB_CUDA(e);
      } else {
        lib.run(p, ops, s);
      }
      cublas->prepare(p);
      cublas->run(p, Operands{buf.a + sc.offset_a, buf.b + sc.offset_b, buf.ref}, s);
      compare_on_device(buf.c + sc.offset_c, buf.ref, cs, dstats, s);
      GEMMLAB_CUDA(cudaMemcpyAsync(hstats, dstats, sizeof(CompareStats), cudaMemcpyDeviceToHost, s));
      GEMMLAB_CUDA(cudaStreamSynchronize(s));
      const CompareStats st = *hstats;
      const double rel = st.r2 > 0 ? std::sqrt(st.d2 / st.r2) : std::sqrt(st.d2);
      const double mx = st.max_r > 0 ? st.max_d / st.max_r : st.max_d;
      const auto tol = tolerance_of(sc.mode);
      sh.verified++;
      if (st.non_finite || !(rel <= tol.rel) || !(mx <= tol.max)) {
        const auto choice = choose(p, sc.mode);
        StressMismatch mm{sc, choice.family + " " + choice.params + " (" + choice.source + ")", t, stream_index,
                          index, rel, mx, int64_t(st.non_finite), judge(sc, buf, s)};
        std::lock_guard lock(sh.mu);
        sh.mismatches.push_back(std::move(mm));
      }
      GEMMLAB_CUDA(cudaGetLastError());
    } catch (const std::exception& e) {
      sh.exceptions++;
      std::lock_guard lock(sh.mu);
      if (sh.errors.size() < 50) sh.errors.push_back(sc.describe() + ": " + e.what());
    }
    if (o.stream_per_call) cudaStreamDestroy(s);
    sh.calls++;
    size_t held = workspace_bytes_held(), peak = sh.peak.load();
    while (held > peak && !sh.peak.compare_exchange_weak(peak, held)) {
    }
    std::lock_guard lock(sh.mu);
    sh.by_route[route] = sh.by_route.value(route, 0) + 1;
    sh.by_mode[to_string(sc.mode)] = sh.by_mode.value(to_string(sc.mode), 0) + 1;
  }
  cudaStreamSynchronize(stream);
  cudaFree(dstats);
  cudaFreeHost(hstats);
  cudaEventDestroy(fork);
  cudaStreamDestroy(capture);
}

}  // namespace

void check_stress_options(const StressOptions& o) {
  if (o.threads < 1 || o.threads > 256) throw UsageError("--threads must be 1 to 256");
  if (o.streams < 1 || o.streams > o.threads) throw UsageError("--streams must be 1 to the number of threads");
  if (!(o.seconds >= 0) || o.calls < 0) throw UsageError("--seconds and --calls must not be negative");
  if (o.seconds == 0 && o.calls == 0) throw UsageError("give --seconds or --calls (or both)");
  if (o.fresh_percent < 0 || o.fresh_percent > 100 || o.graph_percent < 0 || o.graph_percent > 100)
    throw UsageError("--fresh and --graphs are percentages (0 to 100)");
}

StressResult run_stress(const StressOptions& o, std::ostream* progress) {
  check_stress_options(o);
  if (device_count() == 0) throw NoDeviceError();
  int device = 0;
  GEMMLAB_CUDA(cudaGetDevice(&device));
  const GpuModel gpu = GpuModel::of(query_device(device));
  Shared sh(o);
  StressGenerator gen(o.seed * 7919, o.shapes.empty() ? o.fresh_percent : 0, o.shapes.empty() ? o.graph_percent : 0,
                      1 << 21, o.max_mnk, o.modes);
  const auto start = Clock::now();
  sh.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<cudaStream_t> streams(size_t(o.streams));
  for (auto& s : streams) GEMMLAB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Stream 0 is shared by the first threads - streams + 1 threads; each other stream has one thread.
  const int sharing = o.threads - o.streams + 1;
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    const int si = t < sharing ? 0 : t - sharing + 1;
    threads.emplace_back([&, t, si] {
      try {
        GEMMLAB_CUDA(cudaSetDevice(device));
        stress_thread(sh, gen, t, si, streams[size_t(si)], gpu);
      } catch (const std::exception& e) {
        sh.exceptions++;
        std::lock_guard lock(sh.mu);
        sh.errors.push_back("thread " + std::to_string(t) + ": " + e.what());
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread reporter([&] {
    auto next = Clock::now() + std::chrono::seconds(10);
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (progress && Clock::now() >= next) {
        next += std::chrono::seconds(10);
        const double el = std::chrono::duration<double>(Clock::now() - start).count();
        std::lock_guard lock(sh.mu);
        *progress << "stress: " << sh.calls.load() << " calls in " << int(el) << " s ("
                  << int(double(sh.calls.load()) / el) << "/s), " << sh.mismatches.size() << " mismatches, "
                  << sh.exceptions.load() << " exceptions, library memory peak " << (sh.peak.load() >> 20) << " MiB"
                  << std::endl;
      }
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  reporter.join();
  for (auto s : streams) cudaStreamDestroy(s);
  StressResult r;
  r.calls = sh.calls;
  r.verified = sh.verified;
  r.exceptions = sh.exceptions;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.mismatches = std::move(sh.mismatches);
  r.errors = std::move(sh.errors);
  r.by_route = std::move(sh.by_route);
  r.by_mode = std::move(sh.by_mode);
  r.workspace_peak_bytes = sh.peak;
  return r;
}

nlohmann::ordered_json stress_json(const StressOptions& o, const StressResult& r) {
  int device = 0;
  cudaGetDevice(&device);
  const auto dev = query_device(device);
  nlohmann::ordered_json j;
  j["metadata"] = run_metadata(dev, cached_ceilings(dev).value_or(Ceilings{}), TimingOptions{}, Distribution::uniform,
                               o.seed, o.command_line);
  j["options"] = {{"threads", o.threads},       {"streams", o.streams},
                  {"threads_sharing_stream_0", o.threads - o.streams + 1},
                  {"seconds", o.seconds},       {"calls", o.calls},
                  {"fresh_percent", o.fresh_percent}, {"graph_percent", o.graph_percent},
                  {"shapes", o.shapes.size()}, {"max_mnk", o.max_mnk}, {"host_inputs", o.host_inputs},
                  {"stream_per_call", o.stream_per_call}};
  j["calls"] = r.calls;
  j["verified"] = r.verified;
  j["mismatches"] = r.mismatches.size();
  j["exceptions"] = r.exceptions;
  j["seconds"] = r.seconds;
  j["calls_per_second"] = r.seconds > 0 ? double(r.calls) / r.seconds : 0;
  j["workspace_peak_bytes"] = r.workspace_peak_bytes;
  j["workspace_limit_bytes"] = workspace_limit();
  j["by_route"] = r.by_route;
  j["by_mode"] = r.by_mode;
  auto& list = j["mismatch_list"] = nlohmann::ordered_json::array();
  for (auto& m : r.mismatches)
    list.push_back({{"call", m.call.describe()}, {"plan", m.plan}, {"thread", m.thread}, {"stream", m.stream},
                    {"index", m.index}, {"rel_err", m.rel_err}, {"max_diff", m.max_diff},
                    {"non_finite", m.non_finite}, {"verdict", m.verdict}});
  j["errors"] = r.errors;
  j["ok"] = r.ok();
  return j;
}

}  // namespace gemmlab
