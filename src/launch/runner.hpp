#pragma once
// Something that computes a GEMM and can be verified and timed: a kernel family at one
// configuration, cuBLAS, or OpenBLAS on the host.
#include <memory>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "kernels/family.hpp"
#include "gemmlab/gemmlab.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab {

// fp32: full single precision, verified with the FP32 tolerance.
// tf32: tensor cores with 10-bit mantissa inputs; lower precision, always labelled so.
enum class Precision { fp32, tf32 };
enum class Where { device, host };
std::string to_string(Precision p);

// Pointers to the stored matrices: device memory for device runners, host memory for host ones.
struct Operands {
  const float* a;
  const float* b;
  float* c;
};

class GemmRunner {
 public:
  virtual ~GemmRunner() = default;
  virtual std::string name() const = 0;
  virtual Precision precision() const { return Precision::fp32; }
  virtual Where where() const { return Where::device; }
  // Why this runner cannot compute the problem; empty when it can.
  virtual std::string unsupported(const Problem&) const { return {}; }
  // Device memory the runner allocates for itself on this problem (split-K's workspace).
  virtual size_t workspace_bytes(const Problem&) const { return 0; }
  // Compiling, loading, handle creation: everything that must stay out of the timings.
  virtual void prepare(const Problem&) {}
  // Enqueues the product (device runners) or computes it (host runners, stream ignored).
  virtual void run(const Problem& p, const Operands& ops, cudaStream_t stream) = 0;
  // The stage left out ("nostore", ...): such a runner does not compute the product, is never
  // verified, and its records say so. Empty for a real product.
  virtual std::string ablation() const { return {}; }
  // Static facts for the results (registers, shared memory, spills, parameters).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
};

// A kernel family at one parameter point, compiled at run time for the current GPU.
std::unique_ptr<GemmRunner> make_family_runner(const KernelFamily& f, const ParamValues& v,
                                               Ablation ablation = Ablation::none);
std::unique_ptr<GemmRunner> make_cublas_runner(Precision p);
std::unique_ptr<GemmRunner> make_openblas_runner();
// The peer GEMMul8 (Ozaki scheme II, accurate mode) with this many moduli, "gemmul8-N": opened at
// run time from GEMMLAB_GEMMUL8 (scripts/peers/gemmul8.sh); unsupported where it is not built.
std::unique_ptr<GemmRunner> make_gemmul8_runner(unsigned moduli);
// A runner name "gemmul8-N" (N = 2..13, what GEMMul8 takes in FP32): N; 0 for any other name.
unsigned gemmul8_moduli(const std::string& name);
// gemmlab::sgemm / sgemv, the library call, with the configuration it picks.
// The library call (gemmlab::sgemm/sgemv) in a math mode: named "gemmlab", "gemmlab-tensor-fp32",
// "gemmlab-tf32" (the last lower precision).
std::unique_ptr<GemmRunner> make_library_runner(MathMode math = MathMode::strict_fp32);

}  // namespace gemmlab
