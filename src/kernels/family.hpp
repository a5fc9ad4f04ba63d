#pragma once
// A kernel family: one technique, its CUDA source (compiled at run time), its parameter schema
// with defaults and ranges, its validity constraints and its launch geometry.
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// A parameter is 1 to 3 integers, written "16" or "16x16" or "128x128x16", or one of named
// choices ("conflict=swizzle"), stored as the choice's index.
struct ParamSpec {
  std::string name;
  std::vector<int> defaults;  // its size is the parameter's arity
  int min, max;               // for every component
  std::string help;
  std::vector<std::string> choices = {};  // non-empty: a named choice, min = 0, max = choices - 1
};

using ParamValues = std::map<std::string, std::vector<int>>;

struct LaunchGeometry {
  dim3 grid, block;
  size_t shared_bytes = 0;
};

// Facts of one call that a kernel may be specialised for (the canonical, row-major-C problem):
// which dimension of each operand is contiguous and whether 16-byte vectors are aligned.
struct Variant {
  bool a_k_contig = true, b_n_contig = true;
  bool a_vec = false, b_vec = false, c_vec = false;
  std::vector<std::string> defines() const;
};

// Limits a configuration is checked against before compiling (sm_90 values; the run-time
// check uses the device's own).
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxSharedPerBlock = 227 * 1024;
constexpr int kStaticSharedLimit = 48 * 1024;
constexpr int kMaxRegisters = 255;
std::string shared_memory_violation(long long bytes);  // empty when it fits
std::string register_violation(int estimate);          // empty when it fits

// What a configuration does on one (canonical) problem, counted from its parameters: instruction
// counts are per warp, the way the hardware counts them; bytes are those the instructions request.
// A field a family cannot predict stays negative. `assumptions` says what the counts take for
// granted (how the compiler merges loads, what edge tiles do).
struct KernelModel {
  double global_load_inst = -1;   // LDG
  double global_async_inst = -1;  // LDGSTS (cp.async: global to shared without registers)
  double tma_load_inst = -1;      // bulk tensor copies (TMA tile loads, one thread each)
  double global_load_bytes = -1;  // requested by both
  double global_store_inst = -1, global_store_bytes = -1;
  double shared_load_inst = -1, shared_load_bytes = -1;
  double shared_store_inst = -1;
  std::vector<std::string> assumptions;
};

// Ablations place time inside a kernel without counters (seed 001 found its bottleneck by
// removing the C store): one stage left out. Compiled with -DABLATE=<n>; such a kernel does not
// compute the product, and every run of it is labelled so.
enum class Ablation {
  none,
  no_store,       // "nostore": the C store is left out (kept alive behind a test that never holds)
  no_load,        // "noload": only the first K tile(s) come from global memory; later ones reuse them
  no_smem_store,  // "nosmemstore": only the first K tile is stored to shared memory
};
std::string to_string(Ablation a);
Ablation parse_ablation(const std::string& name);  // throws UsageError
std::vector<std::string> compile_defines(Ablation a);  // none: no definition
class KernelFamily;
// Floats between the rows of a split product's partial sums in the workspace: N rounded up to 4, so
// each group of four columns is one aligned 16-byte store (gemm_tile.cuh's partial_pitch); a GEMV's
// partial sums are one column.
inline long long partial_pitch(const Problem& p) { return p.op == Op::gemm ? (p.n + 3) / 4 * 4 : p.n; }
// Throws UsageError when the configuration does not offer the ablation (none always passes).
void check_ablation(const KernelFamily& f, const ParamValues& v, Ablation a);

// Families whose kernels read packed operands: a pre-pass (`entry`, in the family's source, called
// as (const float* x, long long sr, long long sk, long long rows, long long k, long long kp,
// float* out, int raw)) writes op(A) and op(B)ᵀ K-major into `planes` planes each ([plane][rows][kp], kp =
// K rounded up to 128 bytes), and the GEMM kernel reads them through TMA descriptors (its second
// parameter, TensorMaps) of boxes box_m x box_k (A) and box_n x box_k (B; with clusters, the share of
// the B tile one block loads), swizzled in box_k rows.
struct Packing {
  std::string entry;
  int planes = 0;  // 0: the family does not pack
  int box_m = 0, box_n = 0, box_k = 0;
  // The kernel may read an operand that is already K-major (16-byte aligned rows) from the caller's
  // memory through TMA, without the pre-pass: one plane, whose FP32 values the tensor cores read
  // as TF32 by dropping the low 13 bits (truncation, where the pre-pass rounds).
  bool in_place = false;
  // op(A) stays FP32, one plane (the kernel splits it in registers): read in place when K-major with
  // 16-byte rows, else packed unchanged (the pre-pass called with raw = 1).
  bool a_raw = false;
  // Ozaki scheme II (ozaki_math.cuh): the planes are int8 residues, rows of K rounded up to 128 values;
  // `scan_entry` runs first (each row's exponent and the spread into an ozaki::Info), then
  // `entry`; both are called as (ozaki::PassArgs), and the GEMM kernel finds the Info at GemmArgs::extra.
  std::string scan_entry = {};
  // Rows of an even number of lines from 16 on get one line more (zeros): rows a power of two
  // apart put a TMA box's rows into few L2 sets (ozaki at 16384³: perf-log 44).
  bool odd_lines = false;
  bool int8() const { return !scan_entry.empty(); }
  int planes_a() const { return a_raw ? 1 : planes; }
};

// Families that read the caller's operands in place through TMA, in whatever layout they come (no
// pre-pass): the box of one tile of op(A) (box_m x box_k) and of op(B)ᵀ (box_n x box_k). The
// launcher encodes a descriptor per operand and call (launch/tma.hpp), passed as the kernel's
// second parameter (TensorMaps), and refuses operands TMA cannot read.
struct TmaOperands {
  int box_m = 0, box_n = 0, box_k = 0;
  // Whether op(A)'s and op(B)ᵀ's boxes, where K-contiguous, are stored with TMA's swizzle of their
  // row length.
  bool swizzle_a = false, swizzle_b = false;
  // The kernel of the family's source that copies the operands TMA cannot read as given to 16-byte
  // rows, called as (StagedRows) with 256-thread blocks, gridDim.z of them.
  const char* stage_entry = "gemm_stage_rows";
  bool used() const { return box_k > 0; }
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // GEMM families see the row-major-C form of a problem; GEMV families see y = op(A)·x as given
  // (op(A) M×K, x = B, y = C), with the Variant describing op(A): a_k_contig when each output is
  // a dot product of a contiguous row, a_vec when those rows (or A's columns) start 16-byte aligned.
  virtual Op op() const { return Op::gemm; }
  virtual int min_arch() const { return 50; }  // compute capability × 10
  // Compiled for the architecture-specific target (sm_90a: wgmma, setmaxnreg), which runs only
  // on exactly that compute capability.
  virtual bool arch_specific() const { return false; }
  // A configuration that computes with less than FP32 precision (TF32 products): verified with
  // the TF32 tolerance and labelled "tf32" everywhere.
  virtual bool lower_precision(const ParamValues&) const { return false; }
  virtual std::vector<ParamSpec> params() const = 0;
  virtual const char* source() const = 0;      // CUDA C++ for NVRTC; may include "gemm_args.h"
  virtual std::string entry() const = 0;       // extern "C" kernel name
  // Broken rules, one message each; empty when the configuration is valid.
  virtual std::vector<std::string> violations(const ParamValues& v) const = 0;
  // -D definitions that specialise the source for a configuration.
  virtual std::vector<std::string> defines(const ParamValues& v) const = 0;
  // Whether the source reads the Variant's definitions (layout and alignment specialisations).
  virtual bool uses_variant() const { return false; }
  // The configurations a sweep or tuner tries by default (parameter strings).
  virtual std::vector<std::string> search_space() const = 0;
  virtual LaunchGeometry geometry(const ParamValues& v, const Problem& p) const = 0;
  // Split-K: how many slices of K the configuration computes separately (gridDim.z, which the
  // launcher sets), and the extern "C" kernel of the same source that sums them, called as
  // (GemmArgs, int splits). `resident_blocks` is how many blocks of this kernel the GPU holds at
  // once (0 when unknown: no GPU, or before the kernel is loaded).
  virtual int splits(const ParamValues&, const Problem&, int /*resident_blocks*/) const { return 1; }
  virtual std::string reduce_entry() const { return {}; }
  // Floats of workspace for the partial sums of `splits` slices: [split][m][partial_pitch(n)], two
  // floats each with FP64 accumulators (accum=fp64; accumulate.cuh), unless the family keeps them
  // otherwise (`resident_blocks` as for splits(): 0 when unknown).
  virtual long long split_workspace_floats(const ParamValues& v, const Problem& p, int splits, int /*resident_blocks*/) const {
    return splits > 1 ? (long long)splits * (fp64_accumulators(v) ? 2 : 1) * p.m * partial_pitch(p) : 0;
  }
  // The configuration sums in FP64 (by default: its `accum` parameter is "fp64" or "fp64tile",
  // tiled::accum_param).
  virtual bool fp64_accumulators(const ParamValues& v) const;
  // Arrival counters (GemmArgs::counters) of a family whose last block of each tile adds the
  // splits itself, instead of a reduce kernel. Zero before every call; the kernel leaves them so.
  virtual long long workspace_counters(const ParamValues&, const Problem&) const { return 0; }
  // Why this configuration cannot run this problem; empty when it can.
  virtual std::string unsupported(const ParamValues&, const Problem&) const { return {}; }
  virtual Packing packing(const ParamValues&) const { return {}; }
  virtual TmaOperands tma_operands(const ParamValues&) const { return {}; }
  // A persistent grid: the launcher caps gridDim.x at the blocks the GPU holds at once (divided
  // among the gridDim.z splits), and the kernel walks the tiles itself.
  virtual bool persistent(const ParamValues&) const { return false; }
  // Blocks per thread-block cluster along gridDim.x (1: no clusters); gridDim.x is a multiple of it.
  virtual int cluster(const ParamValues&) const { return 1; }
  // The configuration computes Cᵀ = op(B)ᵀ·op(A)ᵀ, written transposed: the launcher hands it that
  // product (transposed_product) as its problem, op(B)ᵀ in A's place.
  virtual bool transposes(const ParamValues&) const { return false; }
  // The ablations this configuration's source honours.
  virtual std::vector<Ablation> ablations(const ParamValues&) const { return {}; }
  // The analytic model of one call (split-K's reduce kernel excluded).
  virtual KernelModel model(const ParamValues&, const Problem&, const Variant&) const { return {}; }
};

// "block=16x16,tile=64x64x8" → values, completed with defaults; throws UsageError on unknown
// names, wrong arity, out-of-range values or broken constraints.
ParamValues parse_params(const KernelFamily& f, const std::string& text);
std::string format_params(const KernelFamily& f, const ParamValues& v);  // canonical "block=16x16,..."
// Only the parameters that differ from the family's defaults ("" at the defaults).
std::string format_changed_params(const KernelFamily& f, const ParamValues& v);
std::string format_value(const ParamSpec& spec, const std::vector<int>& v);

// The -D definitions a configuration is compiled with for a call of this variant (the family's,
// then the variant's when the family reads them): the same list wherever a binary is built.
std::vector<std::string> compile_defines(const KernelFamily& f, const ParamValues& v, const Variant& var);

// Whether parse_params takes the text without an error.
bool accepts(const KernelFamily& f, const std::string& text);

// Every combination of the given values, as parameter strings ("a=1,b=2"), keeping only
// those the family accepts.
std::vector<std::string> product_space(const KernelFamily& f,
                                       const std::vector<std::pair<std::string, std::vector<std::string>>>& axes);

const std::vector<const KernelFamily*>& families();
const KernelFamily* find_family(const std::string& name);  // nullptr when unknown

}  // namespace gemmlab
