#include "gemmlab/gemmlab.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gemmlab/compile.hpp"
#include "gemmlab/device.hpp"
#include "gemmlab/family.hpp"
#include "gemmlab/tuning.hpp"
#include "launch/launcher.hpp"
#include "library/dispatch.hpp"

namespace gemmlab {

namespace {

// Everything a plan depends on. Alpha and beta are not: they travel in the arguments.
struct PlanKey {
  int device;
  Op op;
  Layout layout;
  Trans trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  unsigned aligned;  // bit i: operand i starts 16-byte aligned (it selects the kernel variant)
  cudaStream_t stream;
  MathMode math;
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    size_t h = std::hash<int64_t>()(k.m);
    for (int64_t x : {k.n, k.k, k.lda, k.ldb, k.ldc, int64_t(k.aligned), int64_t(k.device), int64_t(k.op),
                      int64_t(k.layout), int64_t(k.trans_a), int64_t(k.trans_b),
                      int64_t(reinterpret_cast<uintptr_t>(k.stream)), int64_t(k.math)})
      h = h * 1000003u ^ std::hash<int64_t>()(x);
    return h;
  }
};

unsigned alignment_bits(const void* a, const void* b, const void* c) {
  auto al = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0 ? 1u : 0u; };
  return al(a) | al(b) << 1 | al(c) << 2;
}

// A first call may come inside a stream capture (CUDA graphs, PyTorch's among them): global
// capture mode forbids cudaMalloc on the capturing thread, and a memset on the legacy stream
// would join the capture. Planning runs in relaxed mode, and zeroing uses a stream of its own
// that no capture waits on.
class RelaxedCapture {
 public:
  RelaxedCapture() { GEMMLAB_CUDA(cudaThreadExchangeStreamCaptureMode(&old_)); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&old_); }

 private:
  cudaStreamCaptureMode old_ = cudaStreamCaptureModeRelaxed;
};

void* device_alloc(size_t bytes, const std::string& what) {
  size_t free = 0, total = 0;
  GEMMLAB_CUDA(cudaMemGetInfo(&free, &total));
  if (bytes > free)
    throw RuntimeError(what + " needs " + std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB of workspace, " +
                       std::to_string(free >> 20) + " MiB are free");
  void* p = nullptr;
  GEMMLAB_CUDA(cudaMalloc(&p, bytes));
  return p;
}

void zero_aside(void* p, size_t bytes) {
  cudaStream_t s = nullptr;
  GEMMLAB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaError_t e = cudaMemsetAsync(p, 0, bytes, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  GEMMLAB_CUDA(e);
}

// A plan with its own workspace (split-K partial sums and arrival counters, packed or staged operands), so
// that plans on different streams never share them. A vector route's plan is a GEMV plan whose
// matrix may be the call's B: `swap` says the call's pointers trade places.
struct OwnedPlan {
  LaunchPlan plan;
  bool swap = false;
  float* workspace = nullptr;
  unsigned* counters = nullptr;
  float* packed = nullptr;
  float* staged = nullptr;
  size_t bytes = 0;
  ~OwnedPlan() {
    cudaFree(workspace);
    cudaFree(counters);
    cudaFree(packed);
    cudaFree(staged);
  }
};

// What runs a call: the choice, and the problem its family plans (the call's, or a vector
// route's GEMV).
struct Decision {
  Choice choice;
  Route route = Route::gemm;
  Problem problem;
};

class Library {
 public:
  static Library& get() {
    static Library lib;
    return lib;
  }

  // The hot path: a shape seen before is one hash lookup, then the launch. Only a new shape builds,
  // checks and plans the problem (`make` is called under the lock, once per key).
  template <class MakeProblem>
  void run(const PlanKey& key, MakeProblem make, const float* a, const float* b, float* c, float alpha, float beta,
           cudaStream_t stream) {
    const OwnedPlan* plan = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = plans_.find(key);
      if (it == plans_.end()) it = plans_.emplace(key, make_plan(key.device, make(), key.math, a, b, c)).first;
      plan = it->second.get();
    }
    launch(plan->plan, plan->swap ? b : a, plan->swap ? a : b, c, alpha, beta, stream);
  }

  Choice choose(int device, const Problem& p, MathMode math) {
    std::lock_guard lock(mu_);
    return decide(device, p, math).choice;
  }

  size_t held() {
    std::lock_guard lock(mu_);
    size_t bytes = 0;
    for (auto& [key, plan] : plans_) bytes += plan->bytes;
    return bytes;
  }

 private:
  const GpuModel& model(int device) {
    auto it = models_.find(device);
    if (it == models_.end()) it = models_.emplace(device, GpuModel::of(device_info(device))).first;
    return it->second;
  }

  Decision decide(int device, const Problem& p, MathMode math) {
    if (p.op == Op::gemv) return {table_choice(device, p, "a GEMV call"), Route::gemm, p};
    const Problem c = canonical(p);
    auto d = dispatch(model(device), c, math);
    if (d.route != Route::gemm) {
      Problem g = vector_problem(c, d.route);
      auto ch = table_choice(device, g, d.why);
      return {ch, d.route, g};
    }
    if (math == MathMode::strict_fp32)
      if (auto ch = table_choice(device, p, "measured for this shape", /*exact=*/true); !ch.family.empty())
        return {ch, Route::gemm, p};
    Choice ch{d.family, d.params, "model", d.why, d.workspace_bytes, d.predicted_us};
    return {ch, Route::gemm, p};
  }

  // The measured choice for a problem: the tuning database, then the built-in table, then the
  // defaults. With `exact`, only what was measured for this problem: a database entry of its shape
  // class (the user tuned it), a built-in entry of its very shape and layout (the table holds
  // row-major NN squares: its 1024³ entry is no guide for 768³ or 1024 x 4096 x 1024), else nothing.
  Choice table_choice(int device, const Problem& p, const std::string& why, bool exact = false) {
    auto& dev = device_info(device);
    auto arch = arch_name(dev.cc_major, dev.cc_minor);
    if (!db_) {
      db_ = TuningDb::load(default_tuning_db());
      // The library has no other channel to say it: once, on stderr.
      if (!db_->problem().empty()) std::fprintf(stderr, "gemmlab: %s\n", db_->problem().c_str());
    }
    auto usable = [&](const TuningEntry* e) {
      if (!e) return false;
      auto* f = find_family(e->family);
      return f && f->op() == p.op && accepts(*f, e->params) && launcher(*f, e->params).unsupported(p).empty();
    };
    auto made = [&](const std::string& family, const std::string& params, const std::string& source) {
      auto& f = *find_family(family);
      Choice ch{family, params, source, why};
      ch.workspace_bytes = launcher(f, params).workspace_bytes(p);
      return ch;
    };
    if (auto* e = db_->best(dev.name, arch, "", p, exact); usable(e)) return made(e->family, e->params, "tuning database");
    const Problem c = canonical(p);
    const std::string shape = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    // The table's squares were measured row-major NN: another layout reads its operands otherwise
    // (hopper-simt with op(B) K-contiguous runs at a third of its NN speed), so the model decides it.
    const bool measured_layout = c.trans_a == Trans::no && c.trans_b == Trans::no;
    if (auto* e = builtin_table().best(dev.name, arch, "", p, exact);
        usable(e) && (!exact || (e->shape == shape && measured_layout)))
      return made(e->family, e->params, "built-in table");
    if (exact) return {};
    std::string family = p.op == Op::gemm ? "warptiled" : op_a_strides(p).col == 1 ? "gemv-block" : "gemv-columns";
    return made(family, format_params(*find_family(family), parse_params(*find_family(family), "")), "defaults");
  }

  std::unique_ptr<OwnedPlan> make_plan(int device, const Problem& p, MathMode math, const float* a, const float* b,
                                       const float* c) {
    RelaxedCapture relaxed;
    auto d = decide(device, p, math);
    auto& l = launcher(*find_family(d.choice.family), d.choice.params);
    auto owned = std::make_unique<OwnedPlan>();
    // The vector routes' operands in the GEMV's order: the matrix, then the vector. (A GEMM plan trades a column-major call's operands itself.)
    owned->swap = d.route != Route::gemm && swapped(p) != (d.route == Route::gemv_m);
    owned->plan = l.plan(d.problem, owned->swap ? b : a, owned->swap ? a : b, c, /*shared_buffers=*/false,
                         /*whole_alignment=*/true);
    auto& plan = owned->plan;
    const std::string what = "sgemm " + describe(p);
    if (plan.workspace_floats) {
      owned->workspace = static_cast<float*>(device_alloc(plan.workspace_floats * sizeof(float), what));
      plan.args.workspace = owned->workspace;
    }
    if (plan.counter_count) {
      owned->counters = static_cast<unsigned*>(device_alloc(plan.counter_count * sizeof(unsigned), what));
      zero_aside(owned->counters, plan.counter_count * sizeof(unsigned));
      plan.args.counters = owned->counters;
    }
    if (size_t floats = plan.packed.floats()) {
      owned->packed = static_cast<float*>(device_alloc(floats * sizeof(float), what));
      bind_packed(plan, owned->packed);
    }
    if (size_t floats = plan.tma.staged_floats()) {
      owned->staged = static_cast<float*>(device_alloc(floats * sizeof(float), what));
      bind_staged(plan, owned->staged);
    }
    owned->bytes = (plan.workspace_floats + plan.packed.floats() + plan.tma.staged_floats()) * sizeof(float) +
                   plan.counter_count * sizeof(unsigned);
    return owned;
  }

  FamilyLauncher& launcher(const KernelFamily& f, const std::string& params) {
    int device = 0;
    GEMMLAB_CUDA(cudaGetDevice(&device));
    auto key = std::to_string(device) + " " + f.name() + " " + params;
    auto it = launchers_.find(key);
    if (it == launchers_.end())
      it = launchers_.emplace(key, std::make_unique<FamilyLauncher>(f, parse_params(f, params))).first;
    return *it->second;
  }

  const DeviceInfo& device_info(int device) {
    auto it = devices_.find(device);
    if (it == devices_.end()) it = devices_.emplace(device, query_device(device)).first;
    return it->second;
  }

  std::mutex mu_;
  std::unordered_map<PlanKey, std::unique_ptr<OwnedPlan>, PlanKeyHash> plans_;
  std::map<std::string, std::unique_ptr<FamilyLauncher>> launchers_;
  std::map<int, DeviceInfo> devices_;
  std::map<int, GpuModel> models_;
  std::optional<TuningDb> db_;
};

int current_device() {
  int device = 0;
  GEMMLAB_CUDA(cudaGetDevice(&device));
  return device;
}

}  // namespace

std::string to_string(MathMode m) {
  switch (m) {
    case MathMode::strict_fp32: return "strict-fp32";
    case MathMode::tensor_fp32: return "tensor-fp32";
    case MathMode::tf32: return "tf32";
  }
  return "?";
}

MathMode parse_math_mode(const std::string& s) {
  for (auto m : {MathMode::strict_fp32, MathMode::tensor_fp32, MathMode::tf32}) {
    std::string name = to_string(m), underscored = name;
    std::replace(underscored.begin(), underscored.end(), '-', '_');
    if (s == name || s == underscored) return m;
  }
  throw UsageError("unknown mode '" + s + "' (expected strict_fp32, tensor_fp32 or tf32)");
}

namespace {

// The problems of the calls, checked (host only: no CUDA call).
Problem sgemm_problem(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, int64_t lda,
                      int64_t ldb, int64_t ldc) {
  // Zero leading dimensions mean "tight" to the lab; a BLAS call states them, so 0 is an error.
  if (lda <= 0 || ldb <= 0 || ldc <= 0) throw UsageError("sgemm: leading dimensions must be positive");
  Problem p;
  p.m = m, p.n = n, p.k = k;
  p.layout = layout, p.trans_a = trans_a, p.trans_b = trans_b;
  p.lda = lda, p.ldb = ldb, p.ldc = ldc;
  return normalized(p);
}

// A column-major A is the row-major Aᵀ, transposed the other way: one form, whose x and y are the
// one-column B and C with the increments as their leading dimensions.
void check_increments(int64_t incx, int64_t incy) {
  if (incx < 1 || incy < 1)
    throw UsageError("sgemv: increments must be at least 1 (incx = " + std::to_string(incx) +
                     ", incy = " + std::to_string(incy) + ")");
}

Problem sgemv_problem(Layout layout, Trans trans, int64_t m, int64_t n, int64_t lda, int64_t incx, int64_t incy) {
  check_increments(incx, incy);
  if (lda <= 0) throw UsageError("sgemv: the leading dimension must be positive");
  const bool col = layout == Layout::col_major;
  const Trans t = col ? (trans == Trans::no ? Trans::yes : Trans::no) : trans;
  Problem p = Problem::gemv(col ? n : m, col ? m : n, Layout::row_major, t);
  p.lda = lda;
  p = normalized(p);
  p.ldb = incx, p.ldc = incy;
  return p;
}

}  // namespace

void check_sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, const float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (!a || !b || !c) throw UsageError("sgemm: A, B and C must not be null");
  sgemm_problem(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc);
}

void check_sgemv(Layout layout, Trans trans, int64_t m, int64_t n, const float* a, int64_t lda, const float* x,
                 int64_t incx, const float* y, int64_t incy) {
  check_increments(incx, incy);
  if (m == 0 || n == 0) return;
  if (!a || !x || !y) throw UsageError("sgemv: A, x and y must not be null");
  sgemv_problem(layout, trans, m, n, lda, incx, incy);
}

void sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t stream,
           MathMode math) {
  if (m == 0 || n == 0) return;
  if (!a || !b || !c) throw UsageError("sgemm: A, B and C must not be null");
  PlanKey key{current_device(), Op::gemm, layout, trans_a, trans_b, m, n, k, lda, ldb, ldc,
              alignment_bits(a, b, c), stream, math};
  Library::get().run(
      key, [&] { return sgemm_problem(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc); }, a, b, c, alpha, beta,
      stream);
}

void sgemv(Layout layout, Trans trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
           int64_t incx, float beta, float* y, int64_t incy, cudaStream_t stream) {
  check_increments(incx, incy);
  if (m == 0 || n == 0) return;
  if (!a || !x || !y) throw UsageError("sgemv: A, x and y must not be null");
  PlanKey key{current_device(), Op::gemv, layout, trans, Trans::no, m, n, 1, lda, incx, incy, alignment_bits(a, x, y),
              stream, MathMode::strict_fp32};
  Library::get().run(
      key, [&] { return sgemv_problem(layout, trans, m, n, lda, incx, incy); }, a, x, y, alpha, beta, stream);
}

Choice choose(const Problem& p, MathMode math) { return Library::get().choose(current_device(), normalized(p), math); }

size_t workspace_bytes_held() { return Library::get().held(); }
size_t workspace_limit() { return 0; }
void set_workspace_limit(size_t) {}
void release_workspaces() {}

}  // namespace gemmlab
