#include "bench/bench.hpp"

#include <algorithm>
#include <thread>
#include <unistd.h>

#include "timing/ceilings.hpp"
#include "device/device.hpp"
#include "gemmlab/error.hpp"
#include "bench/profile.hpp"
#include "launch/launcher.hpp"
#include "launch/runner.hpp"
#include "library/dispatch.hpp"

namespace gemmlab {

namespace {

constexpr const char* kBaselines[] = {"cublas", "cublas-tf32", "openblas", "gemmlab", "gemmlab-tensor-fp32", "gemmlab-tf32"};

// One problem's buffers on the device and their host copies.
class Workspace {
 public:
  Workspace(const Problem& p, Distribution d, uint64_t seed, cudaStream_t s) : p_(p), stream_(s) {
    auto sa = stored_a(p), sb = stored_b(p), sc = stored_c(p);
    a_ = alloc(sa.elements());
    b_ = alloc(sb.elements());
    c_ = alloc(sc.elements());
    fill_random(a_, sa, d, seed * 3 + 0, s);
    fill_random(b_, sb, d, seed * 3 + 1, s);
    ha_ = to_host(a_, sa.elements());
    hb_ = to_host(b_, sb.elements());
    if (p.beta != 0.0f) {
      c0_ = alloc(sc.elements());
      fill_random(c0_, sc, d, seed * 3 + 2, s);
      hc0_ = to_host(c0_, sc.elements());
    }
  }
  ~Workspace() {
    for (float* x : {a_, b_, c_, c0_}) cudaFree(x);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Before a verified run: C holds C0 when beta reads it, NaN everywhere otherwise.
  void reset_c() {
    auto n = stored_c(p_).elements();
    if (c0_)
      GEMMLAB_CUDA(cudaMemcpyAsync(c_, c0_, size_t(n) * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
    else
      poison(c_, n, stream_);
  }
  std::vector<float> host_c_start() const {
    return c0_ ? hc0_ : std::vector<float>(size_t(stored_c(p_).elements()), poison_value());
  }
  std::vector<float> c_to_host() { return to_host(c_, stored_c(p_).elements()); }

  Operands device() { return {a_, b_, c_}; }
  const float* host_a() const { return ha_.data(); }
  const float* host_b() const { return hb_.data(); }
  const float* host_c0() const { return c0_ ? hc0_.data() : nullptr; }

 private:
  float* alloc(int64_t n) {
    float* x = nullptr;
    GEMMLAB_CUDA(cudaMalloc(&x, size_t(n) * sizeof(float)));
    return x;
  }
  std::vector<float> to_host(const float* x, int64_t n) {
    std::vector<float> h(static_cast<size_t>(n));
    GEMMLAB_CUDA(cudaMemcpyAsync(h.data(), x, h.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    GEMMLAB_CUDA(cudaStreamSynchronize(stream_));
    return h;
  }
  Problem p_;
  cudaStream_t stream_;
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *c0_ = nullptr;
  std::vector<float> ha_, hb_, hc0_;
};

// The timer's flush buffer, cuBLAS's workspace and the loaded kernels, with room to spare.
constexpr size_t timer_and_library_headroom = size_t(512) << 20;

void check_memory(const Problem& p, size_t extra) {
  size_t free = 0, total = 0;
  GEMMLAB_CUDA(cudaMemGetInfo(&free, &total));
  size_t need = size_t(buffer_bytes(p)) + (p.beta != 0.0f ? size_t(stored_c(p).elements()) * 4 : 0) + extra;
  if (need > free)
    throw UsageError(describe(p) + " needs " + std::to_string(need >> 20) + " MiB of GPU memory, " +
                     std::to_string(free >> 20) + " MiB are free");
}

}  // namespace

std::unique_ptr<GemmRunner> make_runner(const KernelSpec& k) {
  if (k.family) return make_family_runner(*k.family, k.params, k.ablation);
  if (k.name == "cublas") return make_cublas_runner(Precision::fp32);
  if (k.name == "cublas-tf32") return make_cublas_runner(Precision::tf32);
  if (k.name == "gemmlab") return make_library_runner(MathMode::strict_fp32);
  if (k.name == "gemmlab-tensor-fp32") return make_library_runner(MathMode::tensor_fp32);
  if (k.name == "gemmlab-tf32") return make_library_runner(MathMode::tf32);
  if (const unsigned n = gemmul8_moduli(k.name)) return make_gemmul8_runner(n);
  return make_openblas_runner();
}

nlohmann::json run_metadata(const DeviceInfo& dev, const Ceilings& c, const TimingOptions& t, Distribution dist,
                            uint64_t seed, const std::string& command) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return {{"tool", "gemmlab"},
          {"gemmlab_commit", build_commit()},
          {"date", utc_now()},
          {"command", command},
          {"gpu", to_json(dev)},
          {"software", to_json(SoftwareVersions::query())},
          {"ceilings", to_json(c)},
          {"host", {{"name", host}, {"cpus", std::thread::hardware_concurrency()}}},
          {"measurement",
           {{"cache_mode", to_string(t.mode)},
            {"l2_flush", t.mode == CacheMode::cold ? "read of max(2 x L2, 64 MiB) before each sample" : "none"},
            {"timer", "cuda events (device), steady_clock (host)"},
            {"warmup", t.warmup},
            {"min_samples", t.min_samples},
            {"max_samples", t.max_samples},
            {"min_time_s", t.min_time_s},
            {"max_time_s", t.max_time_s},
            {"target_spread", t.target_spread},
            {"statistic", "median"}}},
          {"inputs", {{"distribution", to_string(dist)}, {"seed", seed}}}};
}

struct ProblemSession::Buffers {
  Buffers(const Problem& p, Distribution d, uint64_t seed, cudaStream_t s)
      : problem(p), stream(s), ws(p, d, seed, s), verifier(p, ws.host_a(), ws.host_b(), ws.host_c0(), seed) {}
  Problem problem;
  cudaStream_t stream;
  Workspace ws;
  Verifier verifier;
  std::unique_ptr<L2Flush> flush;  // made on first use by run_alone
};

ProblemSession::ProblemSession(const Problem& p, Distribution d, uint64_t seed, cudaStream_t stream)
    : b_(std::make_unique<Buffers>(p, d, seed, stream)) {
  if (b_->verifier.needs_cublas()) {
    auto cublas = make_cublas_runner(Precision::fp32);
    cublas->prepare(p);
    b_->ws.reset_c();
    cublas->run(p, b_->ws.device(), stream);
    b_->verifier.set_cublas_result(b_->ws.c_to_host());
  }
}

ProblemSession::~ProblemSession() = default;

Verdict ProblemSession::verify(GemmRunner& r) {
  const Problem& p = b_->problem;
  r.prepare(p);
  std::vector<float> c;
  if (r.where() == Where::device) {
    b_->ws.reset_c();
    r.run(p, b_->ws.device(), b_->stream);
    c = b_->ws.c_to_host();
  } else {
    c = b_->ws.host_c_start();
    r.run(p, {b_->ws.host_a(), b_->ws.host_b(), c.data()}, nullptr);
  }
  return b_->verifier.check(c.data(), r.precision());
}

Timing ProblemSession::time(GemmRunner& r, DeviceTimer& timer, const TimingOptions& host_opts) {
  const Problem& p = b_->problem;
  r.prepare(p);
  if (r.where() == Where::device) return timer.time([&](cudaStream_t s) { r.run(p, b_->ws.device(), s); });
  std::vector<float> work = b_->ws.host_c_start();
  return time_host([&] { r.run(p, {b_->ws.host_a(), b_->ws.host_b(), work.data()}, nullptr); }, host_opts);
}

Record measure(GemmRunner& r, ProblemSession& session, DeviceTimer& timer, const TimingOptions& host_opts,
               const Ceilings& ceil) {
  const Problem& p = session.problem();
  Record rec;
  rec.kernel = r.name();
  rec.precision = to_string(r.precision());
  rec.problem = p;
  if (auto why = r.unsupported(p); !why.empty()) {
    rec.status = "unsupported: " + why;
    return rec;
  }
  if (auto a = r.ablation(); !a.empty()) {
    rec.status = "ablated: " + a + " (not the product, not verified)";
  } else {
    rec.verdict = session.verify(r);
    rec.verified = true;
    rec.status = rec.verdict.passed ? "ok" : "failed";
  }
  rec.details = r.details();
  rec.timing = session.time(r, timer, host_opts);
  double s = rec.timing.ms.median * 1e-3;
  rec.gflops = flops(p) / s / 1e9;
  rec.gbps = min_bytes(p) / s / 1e9;
  // A GEMV is bound by memory: its ceiling is the copy bandwidth, a GEMM's the FFMA rate.
  rec.peak = p.op == Op::gemv ? "copy_gbps" : "ffma_tflops";
  rec.pct_peak = p.op == Op::gemv ? 100.0 * rec.gbps / ceil.copy_gbps : 100.0 * rec.gflops / (ceil.ffma_tflops * 1e3);
  return rec;
}

const Problem& ProblemSession::problem() const { return b_->problem; }

void ProblemSession::run_alone(GemmRunner& r, const RunAlone& around) {
  const Problem& p = b_->problem;
  if (r.where() != Where::device) throw UsageError(r.name() + " runs on the host: it has no kernels to profile");
  r.prepare(p);
  if (!b_->flush) {
    int dev = 0;
    GEMMLAB_CUDA(cudaGetDevice(&dev));
    b_->flush = std::make_unique<L2Flush>(query_device(dev));
  }
  b_->ws.reset_c();
  GEMMLAB_CUDA(cudaStreamSynchronize(b_->stream));
  around(
      [&] {
        r.run(p, b_->ws.device(), b_->stream);
        GEMMLAB_CUDA(cudaStreamSynchronize(b_->stream));
      },
      [&] {
        (*b_->flush)(b_->stream);
        GEMMLAB_CUDA(cudaStreamSynchronize(b_->stream));
      });
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (auto* f : families()) names.push_back(f->name());
  names.insert(names.end(), std::begin(kBaselines), std::end(kBaselines));
  names.push_back("gemmul8-N");
  return names;
}

std::vector<KernelSpec> resolve_kernels(const std::vector<std::string>& names, const std::vector<std::string>& params) {
  // "family:point" applies to that family alone; a plain point to every family named.
  auto points_for = [&](const std::string& family) {
    std::vector<std::string> out;
    for (auto& p : params) {
      auto colon = p.find(':');
      if (colon == std::string::npos)
        out.push_back(p);
      else if (p.substr(0, colon) == family)
        out.push_back(p.substr(colon + 1));
    }
    return out.empty() ? std::vector<std::string>{""} : out;
  };
  for (auto& p : params)
    if (auto colon = p.find(':'); colon != std::string::npos &&
                                  std::find(names.begin(), names.end(), p.substr(0, colon)) == names.end())
      throw UsageError("--param " + p + " names a family that is not among the kernels");

  std::vector<KernelSpec> out;
  bool any_family = false;
  for (auto& n : names) {
    if (auto* f = find_family(n)) {
      for (auto& p : points_for(n)) out.push_back({n, f, parse_params(*f, p)});
      any_family = true;
    } else if (std::find(std::begin(kBaselines), std::end(kBaselines), n) != std::end(kBaselines) ||
               gemmul8_moduli(n)) {
      out.push_back({n, nullptr, {}});
    } else {
      std::string known;
      for (auto& x : kernel_names()) known += (known.empty() ? "" : ", ") + x;
      throw UsageError("unknown kernel '" + n + "' (known: " + known + ")");
    }
  }
  if (!params.empty() && !any_family) throw UsageError("--param needs a kernel family among the kernels");
  return out;
}

std::vector<int64_t> default_sizes() { return {1024, 2049, 4096}; }
std::vector<std::string> default_kernels(Op op) {
  if (op == Op::gemm) return {"naive", "cublas", "cublas-tf32", "openblas"};
  std::vector<std::string> out = {"cublas"};
  for (auto* f : families())
    if (f->op() == Op::gemv) out.push_back(f->name());
  return out;
}

BenchResult run_bench(const BenchOptions& o, std::ostream& table) {
  auto dev = query_device(0);
  auto ceil = ceilings(dev, o.remeasure_ceilings);
  BenchResult result;
  result.metadata = run_metadata(dev, ceil, o.timing, o.dist, o.seed, o.command_line);
  DeviceTimer timer(dev, o.timing);
  cudaStream_t stream = timer.stream();

  // cuBLAS SGEMM runs first for every problem, asked for or not: it is the reference for large
  // problems and the denominator of every ratio, so each results file shows it.
  std::vector<KernelSpec> specs = {KernelSpec{"cublas", nullptr, {}}};
  for (auto& k : o.kernels)
    if (k.name != "cublas") specs.push_back(k);
  std::vector<std::unique_ptr<GemmRunner>> runners;
  for (auto& k : specs) runners.push_back(make_runner(k));

  // Problems run one at a time, so each must fit on its own, beside the workspaces runners keep
  // across problems (each the size of its largest); all are checked before any output.
  size_t workspace = 0;
  for (auto& r : runners) {
    size_t largest = 0;
    for (auto& p : o.problems) largest = std::max(largest, r->workspace_bytes(p));
    workspace += largest;
  }
  for (auto& p : o.problems) check_memory(p, timer_and_library_headroom + workspace);
  print_table_header(table);
  bool counters_ok = true;
  if (o.averaging && !run_averaging(*o.averaging, o.dist, o.seed, ceil, timer, table, result.records))
    result.all_passed = false;
  for (size_t pi = 0; pi < o.problems.size(); ++pi) {
    const Problem& p = o.problems[pi];
    uint64_t seed = o.seed * 1000003 + pi;
    ProblemSession session(p, o.dist, seed, stream);
    auto host_opts = o.timing;
    host_opts.min_samples = std::min(host_opts.min_samples, 3);  // OpenBLAS: seconds per sample at 8192
    double cublas_ms = 0;

    auto run = [&](GemmRunner& r, const nlohmann::json& extra) {
      Record rec = measure(r, session, timer, host_opts, ceil);
      if (!o.metrics.empty() && counters_ok) {
        auto why = attach_counters(rec, r, session, o.metrics);
        if (!why.empty()) {  // said once; the timings go on without counters
          table << "gemmlab: " << why << "\n";
          counters_ok = false;
        }
      }
      if (pi < o.labels.size()) rec.details["shape"] = o.labels[pi];
      for (auto& [key, value] : extra.items()) rec.details[key] = value;
      if (&r == runners[0].get()) cublas_ms = rec.timing.ms.median;
      rec.x_cublas = cublas_ms > 0 && rec.timing.ms.median > 0 ? cublas_ms / rec.timing.ms.median : 0;
      if (rec.status == "failed") result.all_passed = false;
      print_table_row(table, rec);
      result.records.push_back(std::move(rec));
    };
    for (auto& r : runners) run(*r, nlohmann::json::object());
    if (o.candidates) {
      // The library's candidates for this problem, each run as a family at its split, with the
      // model's prediction beside the measurement.
      auto list = dispatch_candidates(GpuModel::of(dev), canonical(p), *o.candidates);
      if (list.size() > size_t(o.candidates_max)) list.resize(size_t(o.candidates_max));
      for (size_t i = 0; i < list.size(); ++i) {
        const auto& f = *find_family(list[i].family);
        auto r = make_family_runner(f, parse_params(f, list[i].params));
        check_memory(p, timer_and_library_headroom + workspace + r->workspace_bytes(p));
        run(*r, {{"candidate", i}, {"math", to_string(*o.candidates)}, {"predicted_us", list[i].predicted_us}});
      }
    }
  }
  return result;
}

}  // namespace gemmlab
