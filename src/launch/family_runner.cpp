#include <cuda_runtime.h>

#include "gemmlab/compile.hpp"
#include "gemmlab/device.hpp"
#include "gemmlab/error.hpp"
#include "gemmlab/runner.hpp"
#include "kernels/gemm_args.h"

namespace gemmlab {

namespace {

class FamilyRunner final : public GemmRunner {
 public:
  FamilyRunner(const KernelFamily& f, ParamValues v) : family_(f), values_(std::move(v)) {}
  ~FamilyRunner() override {
    if (library_) cudaLibraryUnload(library_);
  }

  std::string name() const override { return family_.name(); }

  std::string unsupported(const Problem& p) const override { return family_.unsupported(values_, p); }

  void prepare(const Problem&) override {
    if (kernel_) return;
    int dev = 0;
    GEMMLAB_CUDA(cudaGetDevice(&dev));
    auto info = query_device(dev);
    if (info.arch() < family_.min_arch())
      throw UsageError(family_.name() + " needs compute capability " + std::to_string(family_.min_arch() / 10) + "." +
                       std::to_string(family_.min_arch() % 10) + " or newer");
    auto compiled = compile_cubin({family_.name(), family_.source(), family_.defines(values_),
                                   arch_name(info.cc_major, info.cc_minor)});
    from_cache_ = compiled.from_cache;
    GEMMLAB_CUDA(cudaLibraryLoadData(&library_, compiled.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    GEMMLAB_CUDA(cudaLibraryGetKernel(&kernel_, library_, family_.entry().c_str()));
    GEMMLAB_CUDA(cudaFuncGetAttributes(&attrs_, reinterpret_cast<const void*>(kernel_)));
  }

  void run(const Problem& p, const Operands& ops, cudaStream_t stream) override {
    auto sa = op_a_strides(p), sb = op_b_strides(p), sc = c_strides(p);
    GemmArgs args{p.m, p.n, p.k, p.alpha, p.beta, ops.a, sa.row, sa.col, ops.b, sb.row, sb.col, ops.c, sc.row, sc.col};
    auto g = family_.geometry(values_, p);
    void* params[] = {&args};
    GEMMLAB_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), g.grid, g.block, params, g.shared_bytes,
                                  stream));
  }

  nlohmann::json details() const override {
    nlohmann::json j = {{"params", format_params(values_)}};
    if (kernel_) {
      j["registers"] = attrs_.numRegs;
      j["static_smem_bytes"] = attrs_.sharedSizeBytes;
      j["local_bytes"] = attrs_.localSizeBytes;
      j["binary_from_cache"] = from_cache_;
    }
    return j;
  }

 private:
  const KernelFamily& family_;
  ParamValues values_;
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr;
  cudaFuncAttributes attrs_{};
  bool from_cache_ = false;
};

}  // namespace

std::unique_ptr<GemmRunner> make_family_runner(const KernelFamily& f, const ParamValues& v) {
  return std::make_unique<FamilyRunner>(f, v);
}

std::string to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "tf32"; }

}  // namespace gemmlab
