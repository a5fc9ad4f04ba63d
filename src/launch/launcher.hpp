#pragma once
// A kernel family at one parameter point, ready to launch on the current GPU: it compiles (or
// finds ahead-of-time binaries for) the variants a call needs, and turns a problem into a plan,
// everything about a launch except the operand pointers and alpha/beta. Planning is the slow part
// (strings, maps, occupancy queries); launching a plan is a few stores and cudaLaunchKernel, so
// callers that see the same shape again (the library) keep plans.
#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "compile/compile.hpp"
#include "device/device.hpp"
#include "kernels/family.hpp"
#include "launch/module.hpp"
#include "gemmlab/problem.hpp"
#include "kernels/gemm_args.h"
#include "launch/tma.hpp"
#include "kernels/common/ozaki_math.cuh"

namespace gemmlab {

struct Operands;

// Operands packed by a pre-pass (KernelFamily::packing): op(A) as [planes][M][kp] at `a`, op(B)ᵀ
// as [planes][N][kp] at `b`, both in one buffer (bind_packed), with TMA descriptors on them.
struct PackedOperands {
  cudaKernel_t pack = nullptr;
  cudaKernel_t scan = nullptr;  // Packing::int8: the pass before `pack`
  Packing spec;
  long long kp = 0;  // the row pitch: K rounded up to 128 bytes (32 floats, 128 int8 values), whole lines (Packing::odd_lines)
  long long m = 0, n = 0, k = 0;
  // Operands read in place (Packing::in_place): their descriptors are encoded at every launch, on
  // the call's pointers, with these row strides (floats); 0: packed.
  long long lda = 0, ldb = 0;
  float* a = nullptr;
  float* b = nullptr;
  void* info = nullptr;  // Packing::int8: the ozaki::Info the pre-passes write, after the planes
  TensorMaps maps{};
  // Buffer size in 4-byte words.
  size_t floats() const {
    if (spec.planes == 0) return 0;
    if (spec.int8()) return (size_t(spec.planes) * size_t(m + n) * size_t(kp) + info_bytes() + 3) / 4;
    return (size_t(spec.planes_a()) * size_t(lda ? 0 : m) + size_t(spec.planes) * size_t(ldb ? 0 : n)) * size_t(kp);
  }
  size_t info_bytes() const { return offsetof(ozaki::Info, exponent) + 4 * size_t(m + n); }
};
static_assert(offsetof(ozaki::Info, exponent) == ozaki::kInfoHeaderWords * sizeof(unsigned),
              "the launcher zeroes the whole header of ozaki::Info before the scan");

// Operands read through TMA (KernelFamily::tma_operands): their descriptors without the base
// address, which each launch adds. An operand TMA cannot read as given is copied first to a
// staged one in `staged` (staged_floats() floats, bind_staged), where the descriptor points.
struct TmaPlan {
  bool used = false;
  cudaKernel_t stage = nullptr;  // the family's copy to 16-byte rows
  OperandMap a, b;
  OperandStaging stage_a, stage_b;  // pitch 0: in place
  unsigned stage_blocks = 0;        // the copy's grid along x: a few blocks per SM
  float* staged = nullptr;
  size_t staged_floats() const { return size_t(stage_a.floats() + stage_b.floats()); }
};

struct LaunchPlan {
  cudaKernel_t kernel = nullptr;
  cudaKernel_t reduce = nullptr;  // split-K's second step, when the family has one
  LaunchGeometry geometry;        // gridDim.z = splits
  int splits = 1;
  unsigned cluster = 1;           // blocks per cluster along x (cudaLaunchKernelEx when above 1)
  // The pre-passes and the split-K reduction launched as programmatic dependents of the grid before
  // them (sm_90 and later; grid_dependency.cuh): each starts while that grid drains instead of after
  // it. The product itself is launched normally: as a dependent, the persistent tensor-core products
  // ran 10-40 % slower behind their pre-passes (perf-log 53).
  bool dependent_launch = false;
  unsigned reduce_blocks = 0;
  bool swap_operands = false;  // a column-major C runs as the row-major Cᵀ = op(B)ᵀ·op(A)ᵀ
  GemmArgs args{};             // strides, sizes, workspace, counters; pointers and alpha/beta per call
  size_t workspace_floats = 0;  // split-K partial products the plan needs (0: none)
  size_t counter_count = 0;     // arrival counters it needs, zeroed (0: none)
  PackedOperands packed;        // spec.planes = 0: the family reads the operands as given
  TmaPlan tma;
};

// Places the plan's staged operands in `buffer` (tma.staged_floats() floats), which must outlive
// every launch of the plan.
void bind_staged(LaunchPlan& plan, float* buffer);

// Places the plan's packed operands in `buffer` (packed.floats() floats) and encodes their TMA
// descriptors: the buffer must outlive every launch of the plan.
void bind_packed(LaunchPlan& plan, float* buffer);

// The row-major-C form a family computes: a column-major C is the row-major Cᵀ = op(B)ᵀ·op(A)ᵀ.
bool swapped(const Problem& p);
Problem canonical(const Problem& p);
// Cᵀ = op(B)ᵀ·op(A)ᵀ of a canonical GEMM as a row-major N x M problem (op(B)ᵀ is its op(A), op(A)ᵀ
// its op(B)); its C is the caller's, written transposed (the plan swaps C's strides).
Problem transposed_product(const Problem& canonical_problem);
// The problem a GEMM family computes for a call: the canonical form, transposed for a configuration
// that transposes. Every use of a family (plan, model, dispatch) goes through it.
Problem family_problem(const KernelFamily& f, const ParamValues& v, const Problem& p);
// The variant of a call on that form whose operands start 16-byte aligned (as cudaMalloc's do).
Variant aligned_variant(const Problem& canonical_problem);
// The variant a configuration runs for a call `p` whose operands' alignment gives `given` (on its
// own problem, family_problem): a TMA-operand family's follows C's alignment alone; with
// `whole_alignment`, one unaligned operand makes all unaligned (the variants built ahead of time);
// a transposed product's C is never written a row at a time.
Variant call_variant(const KernelFamily& f, const ParamValues& v, const Problem& p, Variant given,
                     bool whole_alignment);
// The same for cudaMalloc'd operands.
Variant aligned_variant(const KernelFamily& f, const ParamValues& v, const Problem& p);

// What FamilyLauncher compiles for a call of this variant, and for `p` with cudaMalloc'd operands
// (16-byte aligned: what the lab's runs use), so that others can compile it ahead (CompileAhead).
CompileRequest kernel_request(const KernelFamily& f, const ParamValues& v, const Variant& var, Ablation a,
                              const DeviceInfo& d);
CompileRequest kernel_request(const KernelFamily& f, const ParamValues& v, const Problem& p, const DeviceInfo& d);

// Whether plans launch their kernels as programmatic dependents where the GPU can: yes unless the
// environment sets GEMMLAB_DEPENDENT_LAUNCH=0 (read once), which measures the launch gaps it hides.
bool dependent_launch_enabled();

// Enqueues the plan with these operands and scalars.
void launch(const LaunchPlan& plan, const float* a, const float* b, float* c, float alpha, float beta,
            cudaStream_t stream);

class FamilyLauncher {
 public:
  // An ablation other than none compiles the family with that stage left out (checked against
  // the family's list: UsageError).
  FamilyLauncher(const KernelFamily& f, ParamValues v, Ablation ablation = Ablation::none);
  ~FamilyLauncher();
  FamilyLauncher(const FamilyLauncher&) = delete;
  FamilyLauncher& operator=(const FamilyLauncher&) = delete;

  const KernelFamily& family() const { return family_; }
  const ParamValues& values() const { return values_; }
  Ablation ablation() const { return ablation_; }
  std::string unsupported(const Problem& p) const;
  size_t workspace_bytes(const Problem& p) const;
  // The plan for this problem with operands at these addresses (their 16-byte alignment selects
  // the variant). Compiles or loads on first use of a variant; throws UsageError when the
  // configuration does not fit this GPU. With shared_buffers, the plan's workspace and counters
  // are the launcher's own (grown as needed: one call at a time); without, they are left null
  // for the caller to provide (sizes in the plan).
  // With `whole_alignment`, a call whose operands are not all 16-byte aligned runs the variant for
  // none aligned (the one built ahead of time) instead of compiling its own mix.
  LaunchPlan plan(const Problem& p, const float* a, const float* b, const float* c, bool shared_buffers = true,
                  bool whole_alignment = false);
  // Registers, shared memory, spills, occupancy of the latest planned variant.
  nlohmann::json details() const;

 private:
  struct Loaded {
    Module module;
    cudaKernel_t kernel = nullptr;
    cudaKernel_t reduce = nullptr;
    cudaKernel_t stage = nullptr;
    cudaKernel_t pack = nullptr;  // the operand pre-pass, when the family packs
    cudaKernel_t scan = nullptr;  // its first pass (Packing::int8)
    cudaFuncAttributes attrs{};
    size_t dynamic_smem = 0;  // of the latest geometry
    size_t opted_in = 0;
    double occupancy = 0;  // resident warps / the SM's maximum
    int blocks_per_sm = 0;
  };
  Loaded& load(const Variant& v, const LaunchGeometry& g);
  void fit_shared(Loaded& k, const LaunchGeometry& g);
  // Device memory that grows to the largest request and is kept between calls.
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    void* get(size_t need, bool zeroed);
    ~Buffer() { cudaFree(data); }
  };

  const KernelFamily& family_;
  ParamValues values_;
  Ablation ablation_;
  std::optional<DeviceInfo> device_;
  std::map<std::string, Loaded> loaded_;
  const Loaded* last_ = nullptr;
  Buffer workspace_, counters_, packed_, staged_;
};

}  // namespace gemmlab
