#include <cublas_v2.h>

#include "gemmlab/error.hpp"
#include "baselines/column_major.hpp"
#include "launch/runner.hpp"

namespace gemmlab {

namespace {

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(std::string("cuBLAS: ") + what + ": " + cublasGetStatusString(s));
}

// fp32: cublasSgemm in the default math mode, which never uses TF32 unless asked to.
// tf32: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32, explicitly lower precision.
class Cublas final : public GemmRunner {
 public:
  explicit Cublas(Precision p) : precision_(p) {}
  ~Cublas() override {
    if (handle_) cublasDestroy(handle_);
  }
  std::string name() const override { return precision_ == Precision::fp32 ? "cublas" : "cublas-tf32"; }
  Precision precision() const override { return precision_; }
  std::string unsupported(const Problem& p) const override {
    return p.op == Op::gemv && precision_ == Precision::tf32 ? "cuBLAS has no TF32 SGEMV" : "";
  }

  void prepare(const Problem&) override {
    if (handle_) return;
    check(cublasCreate(&handle_), "create handle");
    check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "set math mode");
  }

  void run(const Problem& p, const Operands& o, cudaStream_t stream) override {
    check(cublasSetStream(handle_, stream), "set stream");
    if (p.op == Op::gemv) return gemv(p, o);
    const auto c = column_major(p, o);
    const int m = int(c.m), n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb), ldc = int(c.ldc);
    const auto ta = c.ta, tb = c.tb;
    const float *a = c.a, *b = c.b;
    if (precision_ == Precision::fp32)
      check(cublasSgemm(handle_, ta, tb, m, n, k, &p.alpha, a, lda, b, ldb, &p.beta, o.c, ldc), "sgemm");
    else
      check(cublasGemmEx(handle_, ta, tb, m, n, k, &p.alpha, a, CUDA_R_32F, lda, b, CUDA_R_32F, ldb, &p.beta, o.c,
                         CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
            "gemmEx tf32");
  }

 private:
  // A row-major stored A is the column-major Aᵀ with the same leading dimension: the
  // transpose flips and the stored dimensions swap.
  void gemv(const Problem& p, const Operands& o) {
    auto a = stored_a(p);
    bool row = p.layout == Layout::row_major;
    bool t = (p.trans_a == Trans::yes) != row;
    int m = int(row ? a.cols : a.rows), n = int(row ? a.rows : a.cols);
    check(cublasSgemv(handle_, t ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, &p.alpha, o.a, int(p.lda), o.b, 1, &p.beta, o.c, 1),
          "sgemv");
  }

  Precision precision_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::unique_ptr<GemmRunner> make_cublas_runner(Precision p) { return std::make_unique<Cublas>(p); }

}  // namespace gemmlab
