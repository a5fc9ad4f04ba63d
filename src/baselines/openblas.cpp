#include <cblas.h>

#include <thread>

#include "launch/runner.hpp"

namespace gemmlab {

namespace {

CBLAS_TRANSPOSE op(Trans t) { return t == Trans::no ? CblasNoTrans : CblasTrans; }

// OpenBLAS SGEMM (SGEMV) on the host with every core.
class OpenBlas final : public GemmRunner {
 public:
  std::string name() const override { return "openblas"; }
  Where where() const override { return Where::host; }
  void prepare(const Problem&) override { openblas_set_num_threads(int(std::thread::hardware_concurrency())); }
  void run(const Problem& p, const Operands& o, cudaStream_t) override {
    auto layout = p.layout == Layout::row_major ? CblasRowMajor : CblasColMajor;
    if (p.op == Op::gemv) {
      auto a = stored_a(p);
      cblas_sgemv(layout, op(p.trans_a), int(a.rows), int(a.cols), p.alpha, o.a, int(p.lda), o.b, 1, p.beta, o.c, 1);
      return;
    }
    cblas_sgemm(layout, op(p.trans_a), op(p.trans_b), int(p.m),
                int(p.n), int(p.k), p.alpha, o.a, int(p.lda), o.b, int(p.ldb), p.beta, o.c, int(p.ldc));
  }
  nlohmann::json details() const override {
    return {{"threads", openblas_get_num_threads()}, {"config", openblas_get_config()}};
  }
};

}  // namespace

std::unique_ptr<GemmRunner> make_openblas_runner() { return std::make_unique<OpenBlas>(); }

}  // namespace gemmlab
