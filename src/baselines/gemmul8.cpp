// GEMMul8 (RIKEN-RCCS/GEMMul8, MIT): Ozaki scheme II on cuBLAS's INT8 products,
// the peer issue 28 measures the ozaki family against. Not linked: a shim built
// on the GPU host from its source (scripts/peers/gemmul8.sh) is opened at run
// time from GEMMLAB_GEMMUL8, so gemmlab builds without it and names it only
// where someone built it.
#include <dlfcn.h>

#include <cstdlib>

#include "baselines/column_major.hpp"
#include "gemmlab/error.hpp"
#include "launch/runner.hpp"

namespace gemmlab {

namespace {

// The shim's C interface (scripts/peers/gemmul8_shim.cu).
using WorkSize = size_t (*)(size_t m, size_t n, size_t k, unsigned moduli);
using Sgemm = int (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, size_t m, size_t n, size_t k,
                      const float *alpha, const float *a, size_t lda, const float *b, size_t ldb, const float *beta,
                      float *c, size_t ldc, unsigned moduli, int fast, void *work);

class Gemmul8 final : public GemmRunner {
 public:
  explicit Gemmul8(unsigned moduli) : moduli_(moduli) {}
  ~Gemmul8() override {
    if (work_) cudaFree(work_);
    if (handle_) cublasDestroy(handle_);
  }
  std::string name() const override { return "gemmul8-" + std::to_string(moduli_); }
  std::string unsupported(const Problem &p) const override {
    if (!std::getenv("GEMMLAB_GEMMUL8"))
      return "GEMMul8 is not built here: set GEMMLAB_GEMMUL8 to the shim "
             "scripts/peers/gemmul8.sh builds";
    if (p.op == Op::gemv) return "GEMMul8 has no GEMV";
    if (p.k > (1ll << 17)) return "GEMMul8 takes K <= 2^17";
    return {};
  }
  size_t workspace_bytes(const Problem &p) const override {
    return open() ? work_size_(size_t(p.m), size_t(p.n), size_t(p.k), moduli_) : 0;
  }
  void prepare(const Problem &p) override {
    if (!open()) throw RuntimeError("GEMMul8 shim: " + error_);
    if (!handle_ && cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) throw RuntimeError("GEMMul8: cublasCreate failed");
    const size_t need = workspace_bytes(p);
    if (need > work_bytes_) {
      if (work_) GEMMLAB_CUDA(cudaFree(work_));
      work_ = nullptr;
      GEMMLAB_CUDA(cudaMalloc(&work_, need));
      work_bytes_ = need;
    }
  }
  void run(const Problem &p, const Operands &o, cudaStream_t stream) override {
    if (cublasSetStream(handle_, stream) != CUBLAS_STATUS_SUCCESS)
      throw RuntimeError("GEMMul8: cublasSetStream failed");
    const auto c = column_major(p, o);
    if (sgemm_(handle_, c.ta, c.tb, size_t(c.m), size_t(c.n), size_t(c.k), &p.alpha, c.a, size_t(c.lda), c.b,
               size_t(c.ldb), &p.beta, o.c, size_t(c.ldc), moduli_, 0, work_) != 0)
      throw RuntimeError("GEMMul8 sgemm failed");
  }
  nlohmann::json details() const override {
    return {{"params", "moduli=" + std::to_string(moduli_) + ", accurate mode"},
            {"library", std::getenv("GEMMLAB_GEMMUL8")}};
  }

 private:
  bool open() const {
    if (sgemm_) return true;
    if (!error_.empty()) return false;
    const char *path = std::getenv("GEMMLAB_GEMMUL8");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib) {
      work_size_ = reinterpret_cast<WorkSize>(dlsym(lib, "gemmlab_gemmul8_work_size"));
      sgemm_ = reinterpret_cast<Sgemm>(dlsym(lib, "gemmlab_gemmul8_sgemm"));
    }
    if (!work_size_ || !sgemm_) {
      error_ = path ? std::string(dlerror() ? dlerror() : "symbols missing") : "GEMMLAB_GEMMUL8 is not set";
      sgemm_ = nullptr;
    }
    return sgemm_ != nullptr;
  }
  unsigned moduli_;
  mutable WorkSize work_size_ = nullptr;
  mutable Sgemm sgemm_ = nullptr;
  mutable std::string error_;
  cublasHandle_t handle_ = nullptr;
  void *work_ = nullptr;
  size_t work_bytes_ = 0;
};

}  // namespace

unsigned gemmul8_moduli(const std::string &name) {
  const std::string prefix = "gemmul8-";
  if (name.rfind(prefix, 0) != 0 || name.size() > prefix.size() + 2) return 0;
  unsigned n = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + unsigned(c - '0');
  }
  return n >= 2 && n <= 13 ? n : 0;
}

std::unique_ptr<GemmRunner> make_gemmul8_runner(unsigned moduli) { return std::make_unique<Gemmul8>(moduli); }

}  // namespace gemmlab
