#include "launch/runner.hpp"
#include "launch/launcher.hpp"

namespace gemmlab {

namespace {

class FamilyRunner final : public GemmRunner {
 public:
  FamilyRunner(const KernelFamily& f, ParamValues v, Ablation a) : launcher_(f, std::move(v), a) {}
  std::string name() const override {
    auto a = ablation();
    return launcher_.family().name() + (a.empty() ? "" : "[" + a + "]");
  }
  Precision precision() const override {
    return launcher_.family().lower_precision(launcher_.values()) ? Precision::tf32 : Precision::fp32;
  }
  std::string ablation() const override {
    return launcher_.ablation() == Ablation::none ? "" : to_string(launcher_.ablation());
  }
  std::string unsupported(const Problem& p) const override { return launcher_.unsupported(p); }
  size_t workspace_bytes(const Problem& p) const override { return launcher_.workspace_bytes(p); }
  void prepare(const Problem& p) override {
    // cudaMalloc'd buffers are 256-byte aligned: the variant of a fresh allocation.
    alignas(16) static const float probe[4] = {};
    launcher_.plan(p, probe, probe, probe);
  }
  void run(const Problem& p, const Operands& ops, cudaStream_t stream) override {
    launch(launcher_.plan(p, ops.a, ops.b, ops.c), ops.a, ops.b, ops.c, p.alpha, p.beta, stream);
  }
  nlohmann::json details() const override { return launcher_.details(); }

 private:
  FamilyLauncher launcher_;
};

}  // namespace

std::unique_ptr<GemmRunner> make_family_runner(const KernelFamily& f, const ParamValues& v, Ablation a) {
  return std::make_unique<FamilyRunner>(f, v, a);
}

std::string to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "tf32"; }

}  // namespace gemmlab
