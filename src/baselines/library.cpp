#include "gemmlab/gemmlab.hpp"
#include "gemmlab/runner.hpp"

namespace gemmlab {

namespace {

// The library call as a user makes it: gemmlab::sgemm / sgemv, which picks its configuration.
class Library final : public GemmRunner {
 public:
  std::string name() const override { return "gemmlab"; }
  void prepare(const Problem& p) override { choice_ = choose(p); }
  void run(const Problem& p, const Operands& o, cudaStream_t stream) override {
    if (p.op == Op::gemv)
      sgemv(p.layout, p.trans_a, p.trans_a == Trans::no ? p.m : p.k, p.trans_a == Trans::no ? p.k : p.m, p.alpha, o.a,
            p.lda, o.b, 1, p.beta, o.c, 1, stream);
    else
      sgemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, o.a, p.lda, o.b, p.ldb, p.beta, o.c, p.ldc, stream);
  }
  nlohmann::json details() const override {
    return {{"params", choice_.family + " " + choice_.params + " (" + choice_.source + ")"}};
  }

 private:
  Choice choice_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_library_runner() { return std::make_unique<Library>(); }

}  // namespace gemmlab
