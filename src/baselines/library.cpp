#include "gemmlab/gemmlab.hpp"
#include "launch/runner.hpp"

namespace gemmlab {

namespace {

// The library call as a user makes it: gemmlab::sgemm / sgemv, which picks its configuration.
class Library final : public GemmRunner {
 public:
  explicit Library(MathMode math) : math_(math) {}
  std::string name() const override {
    return math_ == MathMode::strict_fp32 ? "gemmlab" : "gemmlab-" + to_string(math_);
  }
  Precision precision() const override { return math_ == MathMode::tf32 ? Precision::tf32 : Precision::fp32; }
  void prepare(const Problem& p) override { choice_ = choose(p, math_); }
  size_t workspace_bytes(const Problem& p) const override { return choose(p, math_).workspace_bytes; }
  void run(const Problem& p, const Operands& o, cudaStream_t stream) override {
    if (p.op == Op::gemv)
      sgemv(p.layout, p.trans_a, p.trans_a == Trans::no ? p.m : p.k, p.trans_a == Trans::no ? p.k : p.m, p.alpha, o.a,
            p.lda, o.b, 1, p.beta, o.c, 1, stream);
    else
      sgemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, p.alpha, o.a, p.lda, o.b, p.ldb, p.beta, o.c, p.ldc, stream,
            math_);
  }
  nlohmann::json details() const override {
    return {{"params", choice_.family + " " + choice_.params + " (" + choice_.source + ")"}, {"why", choice_.why},
            {"workspace_bytes", choice_.workspace_bytes}, {"predicted_us", choice_.predicted_us}};
  }

 private:
  MathMode math_;
  Choice choice_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_library_runner(MathMode math) { return std::make_unique<Library>(math); }

}  // namespace gemmlab
