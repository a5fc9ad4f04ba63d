#include <algorithm>
#include <map>

#include <cuda_runtime.h>

#include "gemmlab/compile.hpp"
#include "gemmlab/device.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/module.hpp"
#include "gemmlab/runner.hpp"
#include "kernels/gemm_args.h"

namespace gemmlab {

namespace {

// The row-major-C form of a problem: a column-major C is a row-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so the
// operands trade places (and M with N); families only ever see row-major C.
struct Canonical {
  Problem p;
  const float* a;
  const float* b;
};

Canonical canonical(const Problem& p, const Operands& o) {
  // GEMV is never swapped: its kernels take any strides of op(A), and x and y are vectors.
  if (p.layout == Layout::row_major || p.op == Op::gemv) return {p, o.a, o.b};
  Problem q = p;
  q.layout = Layout::row_major;
  std::swap(q.m, q.n);
  std::swap(q.trans_a, q.trans_b);
  std::swap(q.lda, q.ldb);
  return {q, o.b, o.a};
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

Variant variant_of(const Canonical& c, const float* cptr) {
  Variant v;
  if (c.p.op == Op::gemv) {
    v.a_k_contig = op_a_strides(c.p).col == 1;
    v.b_n_contig = true;
    v.a_vec = c.p.lda % 4 == 0 && aligned16(c.a);
    v.b_vec = aligned16(c.b);
    v.c_vec = aligned16(cptr);
    return v;
  }
  v.a_k_contig = c.p.trans_a == Trans::no;
  v.b_n_contig = c.p.trans_b == Trans::no;
  v.a_vec = c.p.lda % 4 == 0 && aligned16(c.a);
  v.b_vec = c.p.ldb % 4 == 0 && aligned16(c.b);
  v.c_vec = c.p.ldc % 4 == 0 && aligned16(cptr);
  return v;
}

class FamilyRunner final : public GemmRunner {
 public:
  FamilyRunner(const KernelFamily& f, ParamValues v) : family_(f), values_(std::move(v)) {}
  ~FamilyRunner() override {
    cudaFree(workspace_);
    cudaFree(counters_);
  }

  std::string name() const override { return family_.name(); }

  std::string unsupported(const Problem& p) const override {
    if (p.op != family_.op())
      return family_.name() + " is a " + to_string(family_.op()) + " family; this is a " + to_string(p.op) + " problem";
    return family_.unsupported(values_, canonical(p, {nullptr, nullptr, nullptr}).p);
  }

  size_t workspace_bytes(const Problem& p) const override {
    if (p.op != family_.op()) return 0;
    auto c = canonical(p, {nullptr, nullptr, nullptr}).p;
    // Before the kernel is loaded the wave is unknown: the family's stand-in decides the splits.
    return workspace_floats(c, 0) * sizeof(float) + size_t(family_.workspace_counters(values_, c)) * sizeof(unsigned);
  }

  void prepare(const Problem& p) override {
    if (!device_) {
      int dev = 0;
      GEMMLAB_CUDA(cudaGetDevice(&dev));
      device_ = query_device(dev);
      if (device_->arch() < family_.min_arch())
        throw UsageError(family_.name() + " needs compute capability " + std::to_string(family_.min_arch() / 10) + "." +
                         std::to_string(family_.min_arch() % 10) + " or newer");
    }
    // cudaMalloc'd buffers are 256-byte aligned: the variant of a fresh allocation.
    alignas(16) static const float probe[4] = {};
    auto c = canonical(p, {probe, probe, nullptr});
    last_ = &load(variant_of(c, probe), c.p);
  }

  void run(const Problem& p, const Operands& ops, cudaStream_t stream) override {
    auto c = canonical(p, ops);
    const Loaded& k = load(variant_of(c, ops.c), c.p);
    last_ = &k;
    auto sa = op_a_strides(c.p), sb = op_b_strides(c.p), sc = c_strides(c.p);
    GemmArgs args{c.p.m, c.p.n, c.p.k, c.p.alpha, c.p.beta, c.a, sa.row, sa.col, c.b, sb.row, sb.col,
                  ops.c, sc.row, sc.col, nullptr, nullptr};
    const int resident = k.blocks_per_sm * device_->sms;
    int splits = family_.splits(values_, c.p, resident);
    if (size_t floats = workspace_floats(c.p, resident); floats > 0) args.workspace = workspace(floats);
    if (long long n = family_.workspace_counters(values_, c.p); n > 0) args.counters = counters(size_t(n));
    auto g = family_.geometry(values_, c.p);
    g.grid.z = unsigned(splits);
    void* params[] = {&args};
    GEMMLAB_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k.kernel), g.grid, g.block, params, g.shared_bytes,
                                  stream));
    if (splits > 1 && k.reduce) {
      void* reduce_params[] = {&args, &splits};
      long long blocks = std::min<long long>((c.p.m * c.p.n + 255) / 256, 8ll * device_->sms);
      GEMMLAB_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(k.reduce), dim3(unsigned(blocks)), dim3(256),
                                    reduce_params, 0, stream));
    }
  }

  nlohmann::json details() const override {
    nlohmann::json j = {{"params", format_params(family_, values_)}};
    if (last_) {
      j["registers"] = last_->attrs.numRegs;
      j["static_smem_bytes"] = last_->attrs.sharedSizeBytes;
      j["dynamic_smem_bytes"] = last_->dynamic_smem;
      j["local_bytes"] = last_->attrs.localSizeBytes;
      j["occupancy"] = last_->occupancy;
      j["binary_from_cache"] = last_->from_cache;
    }
    return j;
  }

 private:
  struct Loaded {
    Module module;
    cudaKernel_t kernel = nullptr;
    cudaKernel_t reduce = nullptr;  // split-K's second step, when the family has one
    cudaFuncAttributes attrs{};
    size_t dynamic_smem = 0;  // of the latest geometry
    size_t opted_in = 0;
    double occupancy = 0;  // resident warps / the SM's maximum
    int blocks_per_sm = 0;
    bool from_cache = false;
  };

  Loaded& load(const Variant& v, const Problem& p) {
    auto defines = family_.defines(values_);
    if (family_.uses_variant())
      for (auto& d : v.defines()) defines.push_back(d);
    std::string key;
    for (auto& d : defines) key += d + " ";
    auto it = loaded_.find(key);
    if (it == loaded_.end()) {
      Loaded k{Module(family_.name(), family_.source(), defines, arch_name(device_->cc_major, device_->cc_minor))};
      k.from_cache = k.module.from_cache();
      k.kernel = k.module.kernel(family_.entry());
      if (!family_.reduce_entry().empty()) k.reduce = k.module.kernel(family_.reduce_entry());
      GEMMLAB_CUDA(cudaFuncGetAttributes(&k.attrs, reinterpret_cast<const void*>(k.kernel)));
      it = loaded_.emplace(key, std::move(k)).first;
    }
    fit_shared(it->second, family_.geometry(values_, p));
    return it->second;
  }

  // Dynamic shared memory may depend on the problem (a GEMV's staged x): check it against the
  // device, opt in above 48 KB, and keep the occupancy of the latest geometry.
  void fit_shared(Loaded& k, const LaunchGeometry& g) {
    if (g.shared_bytes == k.dynamic_smem && k.occupancy > 0) return;
    if (g.shared_bytes + k.attrs.sharedSizeBytes > device_->smem_per_block_optin)
      throw UsageError(family_.name() + " " + format_params(family_, values_) + " needs " +
                       std::to_string((g.shared_bytes + k.attrs.sharedSizeBytes + 1023) / 1024) +
                       " KB of shared memory, over the " + std::to_string(device_->smem_per_block_optin / 1024) +
                       " KB this GPU gives a block");
    if (g.shared_bytes > size_t(kStaticSharedLimit) && g.shared_bytes > k.opted_in) {  // above 48 KB a kernel must opt in
      GEMMLAB_CUDA(cudaKernelSetAttributeForDevice(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   int(g.shared_bytes), device_->ordinal));
      k.opted_in = g.shared_bytes;
    }
    int threads = int(g.block.x * g.block.y * g.block.z), blocks = 0;
    GEMMLAB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(k.kernel),
                                                               threads, g.shared_bytes));
    k.dynamic_smem = g.shared_bytes;
    k.blocks_per_sm = blocks;
    k.occupancy = double(blocks * threads) / device_->max_threads_per_sm;
  }

  size_t workspace_floats(const Problem& c, int resident) const {
    int splits = family_.splits(values_, c, resident);
    if (splits <= 1) return 0;
    return size_t(splits) * size_t(c.m) * size_t(c.n);
  }

  // Split partial sums; grows to the largest problem seen, kept between calls.
  float* workspace(size_t floats) {
    if (floats > workspace_floats_) {
      GEMMLAB_CUDA(cudaFree(workspace_));
      workspace_ = nullptr;
      GEMMLAB_CUDA(cudaMalloc(&workspace_, floats * sizeof(float)));
      workspace_floats_ = floats;
    }
    return workspace_;
  }

  // Arrival counters: zeroed when (re)allocated, and every kernel leaves them zero.
  unsigned* counters(size_t n) {
    if (n > counters_n_) {
      GEMMLAB_CUDA(cudaFree(counters_));
      counters_ = nullptr;
      GEMMLAB_CUDA(cudaMalloc(&counters_, n * sizeof(unsigned)));
      GEMMLAB_CUDA(cudaMemset(counters_, 0, n * sizeof(unsigned)));
      counters_n_ = n;
    }
    return counters_;
  }

  const KernelFamily& family_;
  ParamValues values_;
  float* workspace_ = nullptr;
  size_t workspace_floats_ = 0;
  unsigned* counters_ = nullptr;
  size_t counters_n_ = 0;
  std::optional<DeviceInfo> device_;
  std::map<std::string, Loaded> loaded_;
  const Loaded* last_ = nullptr;
};

}  // namespace

std::unique_ptr<GemmRunner> make_family_runner(const KernelFamily& f, const ParamValues& v) {
  return std::make_unique<FamilyRunner>(f, v);
}

std::string to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "tf32"; }

}  // namespace gemmlab
