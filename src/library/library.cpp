#include "gemmlab/gemmlab.hpp"

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

// A plan with its own split-K workspace and arrival counters, so that plans on different streams
// never share them.
struct OwnedPlan {
  LaunchPlan plan;
  float* workspace = nullptr;
  unsigned* counters = nullptr;
  float* packed = nullptr;
  ~OwnedPlan() {
    cudaFree(workspace);
    cudaFree(counters);
    cudaFree(packed);
  }
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
    const LaunchPlan* plan = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = plans_.find(key);
      if (it == plans_.end()) it = plans_.emplace(key, make_plan(key.device, make(), key.math, a, b, c)).first;
      plan = &it->second->plan;
    }
    launch(*plan, a, b, c, alpha, beta, stream);
  }

  Choice choose(int device, const Problem& p, MathMode math) {
    std::lock_guard lock(mu_);
    return choice(device, p, math);
  }

 private:
  Choice choice(int device, const Problem& p, MathMode math) {
    auto& dev = device_info(device);
    if (p.op == Op::gemm && math != MathMode::strict_fp32 && dev.arch() >= 80) {
      // The tensor-core families at the configurations measured best on an H100 (results/h100/
      // tf32x3.json): 3x at its accurate defaults (128x256 tiles, about 1.1x the speed of 128x128
      // ones when both fill their waves), or 128x128 tiles where those fill the last wave better
      // (1024³: 38.8 against 25.8 TFLOP/s; 2049³: 65.2 against 53.6); 1x with the widest tile.
      const bool hopper = dev.arch() == 90;
      const char* family = hopper ? "wgmma" : "tf32";
      auto filled = [&](long long bm, long long bn) {  // the share of the last wave's SMs with a tile
        const long long tiles = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn), sms = dev.sms;
        return double(tiles) / double((tiles + sms - 1) / sms * sms);
      };
      std::string params = !hopper                  ? (math == MathMode::tf32 ? "mode=1x" : "mode=3x")
                           : math == MathMode::tf32 ? "mode=1x,tile=128x256x32,accum=tc,stages=4"
                           : 1.1 * filled(128, 256) >= filled(128, 128)
                               ? "mode=3x"
                               : "mode=3x,tile=128x128x32,stages=3,slices=1";
      auto& f = *find_family(family);
      auto l = format_params(f, parse_params(f, params));
      if (launcher(f, l).unsupported(p).empty()) return {family, l, "defaults for " + to_string(math)};
    }
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
    if (auto* e = db_->best(dev.name, arch, "", p); usable(e)) return {e->family, e->params, "tuning database"};
    if (auto* e = builtin_table().best(dev.name, arch, "", p); usable(e)) return {e->family, e->params, "built-in table"};
    std::string family = p.op == Op::gemm ? "warptiled" : op_a_strides(p).col == 1 ? "gemv-block" : "gemv-columns";
    return {family, format_params(*find_family(family), parse_params(*find_family(family), "")), "defaults"};
  }

  std::unique_ptr<OwnedPlan> make_plan(int device, const Problem& p, MathMode math, const float* a, const float* b,
                                       const float* c) {
    auto ch = choice(device, p, math);
    auto& l = launcher(*find_family(ch.family), ch.params);
    auto owned = std::make_unique<OwnedPlan>();
    owned->plan = l.plan(p, a, b, c, /*shared_buffers=*/false);
    auto& plan = owned->plan;
    if (plan.workspace_floats) {
      GEMMLAB_CUDA(cudaMalloc(&owned->workspace, plan.workspace_floats * sizeof(float)));
      plan.args.workspace = owned->workspace;
    }
    if (plan.counter_count) {
      GEMMLAB_CUDA(cudaMalloc(&owned->counters, plan.counter_count * sizeof(unsigned)));
      GEMMLAB_CUDA(cudaMemset(owned->counters, 0, plan.counter_count * sizeof(unsigned)));
      plan.args.counters = owned->counters;
    }
    if (size_t floats = plan.packed.floats()) {
      GEMMLAB_CUDA(cudaMalloc(&owned->packed, floats * sizeof(float)));
      bind_packed(plan, owned->packed);
    }
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

void sgemm(Layout layout, Trans trans_a, Trans trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, cudaStream_t stream,
           MathMode math) {
  if (m == 0 || n == 0) return;
  if (!a || !b || !c) throw UsageError("sgemm: A, B and C must not be null");
  PlanKey key{current_device(), Op::gemm, layout, trans_a, trans_b, m, n, k, lda, ldb, ldc,
              alignment_bits(a, b, c), stream, math};
  Library::get().run(
      key,
      [&] {
        // Zero leading dimensions mean "tight" to the lab; a BLAS call states them, so 0 is an error.
        if (lda <= 0 || ldb <= 0 || ldc <= 0) throw UsageError("sgemm: leading dimensions must be positive");
        Problem p;
        p.m = m, p.n = n, p.k = k;
        p.layout = layout, p.trans_a = trans_a, p.trans_b = trans_b;
        p.lda = lda, p.ldb = ldb, p.ldc = ldc;
        return normalized(p);
      },
      a, b, c, alpha, beta, stream);
}

void sgemv(Layout layout, Trans trans, int64_t m, int64_t n, float alpha, const float* a, int64_t lda, const float* x,
           int64_t incx, float beta, float* y, int64_t incy, cudaStream_t stream) {
  if (incx != 1 || incy != 1) throw UsageError("sgemv: only unit increments (incx = incy = 1) are supported");
  if (m == 0 || n == 0) return;
  if (!a || !x || !y) throw UsageError("sgemv: A, x and y must not be null");
  PlanKey key{current_device(), Op::gemv, layout, trans, Trans::no, m, n, 1, lda, 0, 0, alignment_bits(a, x, y),
              stream, MathMode::strict_fp32};
  Library::get().run(
      key,
      [&] {
        if (lda <= 0) throw UsageError("sgemv: the leading dimension must be positive");
        Problem p = Problem::gemv(m, n, layout, trans);
        p.lda = lda;
        return normalized(p);
      },
      a, x, y, alpha, beta, stream);
}

Choice choose(const Problem& p, MathMode math) { return Library::get().choose(current_device(), normalized(p), math); }

}  // namespace gemmlab
