#pragma once
// The library's choice of kernel for one call, by shape: a vector product goes to the GEMV
// families; a matrix product to the candidate configuration (tile, split of K, SIMT or tensor
// cores) whose modelled time is least on this GPU. The model needs only the GPU's SM count, FP32
// rate, memory bandwidth and memory size, so it carries to GPUs nobody measured; the measured
// table (the tuning database, the built-in table) refines it where its class matches exactly.
// No CUDA call here: the rules are tested on described GPUs.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "gemmlab/gemmlab.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab {

// What the model knows of a GPU.
struct GpuModel {
  std::string name;
  int arch = 0;  // compute capability x 10
  int sms = 0;
  double fp32_tflops = 0;  // sustained FFMA rate
  double dram_gbps = 0;    // device copy, bytes read + written
  size_t memory_bytes = 0;
  size_t smem_per_sm = 0;
  int regs_per_sm = 65536, max_threads_per_sm = 2048;
  // From the device's peak figures, at the fractions measured on an H100 (FFMA 64.3 of 66.9
  // TFLOP/s, copy 3015 of 3352 GB/s).
  static GpuModel of(const DeviceInfo& d);
  static GpuModel h100();  // H100 SXM, as queried there
  static GpuModel h200();  // H200 SXM, as queried there (the H100's SMs with 4.8 TB/s and 141 GB)
  static GpuModel a100();  // A100 SXM 40 GB, from its data sheet
  // h100(), h200() or a100() by their short names; none for another name.
  static std::optional<GpuModel> named(const std::string& name);
};

// How a call is computed.
enum class Route {
  gemm,    // a GEMM family on the problem itself
  gemv_n,  // N = 1 (of the row-major-C form): y = op(A)·x, a GEMV family
  gemv_m,  // M = 1: yᵀ = xᵀ·op(B), the GEMV y = op(B)ᵀ·x with the operands trading places
};
std::string to_string(Route r);

struct Dispatch {
  Route route = Route::gemm;
  std::string family, params;  // params complete (canonical); empty for GEMV routes (the table decides)
  int splits = 1;
  double predicted_us = 0;     // the model's time (0 for GEMV routes)
  size_t workspace_bytes = 0;  // split-K partial sums or packed operands
  std::string why;             // one line: the route and the reason
};

// The choice for the row-major-C (canonical) form of a GEMM problem. Always valid for the
// problem: every candidate it returns supports it.
// Candidates whose workspace (split-K partial sums, packed or staged operands) would exceed
// `max_workspace` bytes are left out: 0 leaves the configurations that need none.
constexpr size_t kNoWorkspaceBound = ~size_t(0);
Dispatch dispatch(const GpuModel& gpu, const Problem& canonical, MathMode math,
                  size_t max_workspace = kNoWorkspaceBound);

// Every configuration the model weighed for a GEMM problem (GEMV routes aside), each at its best
// split, fastest predicted first: what `gemmlab choose --candidates` prints and the calibration
// of the model measures. `why` is empty.
std::vector<Dispatch> dispatch_candidates(const GpuModel& gpu, const Problem& canonical, MathMode math,
                                          size_t max_workspace = kNoWorkspaceBound);

// A product a few rows or columns past a multiple of the large tiles (1025 = 8·128 + 1) pays a
// whole tile row or column for them: computed instead as its main block (the first M - rows by
// N - cols of C) and the rows and columns past it, each a call of its own (thin products, GEMVs),
// where the model prices the parts, each after the first kPeelPartUs more, under the whole (run
// beside the main block, 1025³'s two edge parts cost 7.8 us over the model's parts; one after
// another, 15-17 us; perf-log 104). In the caller's orientation (any layout), in every math mode
// (each part meets the mode's contract); none: rows = cols = 0.
struct Peel {
  long long rows = 0, cols = 0;       // of C past the main block
  double whole_us = 0, parts_us = 0;  // the model's times
  bool any() const { return rows || cols; }
};
constexpr long long kPeelTile = 128, kPeelMax = 8;
constexpr double kPeelPartUs = 4;
Peel peel(const GpuModel& gpu, const Problem& p, MathMode math);
// Whether a peeled call's edge parts run beside its main block (a side stream: they fill the SMs
// its last wave leaves idle) or after it. Beside an ozaki main block of more than kBesideWaves
// waves of kPeelTile tiles they cost far more than their own time (its persistent product blocks
// fill every SM for many waves): tensor_fp32 8193³ 7.25 ms after, 8.62 beside, 7.71 whole; 4097³
// 1.21 against 1.28; at 2049³ (1.94 waves) beside still wins, 0.241-0.243 ms against 0.255-0.260 (105c).
// Every other family measured beside at or ahead of after (strict 2049³-8193³).
constexpr double kBesideWaves = 4;
bool edges_beside(const GpuModel& gpu, const Problem& main, const std::string& main_family);
// The parts of a peeled problem: the main block, then the rows past it (every column), then the
// columns past it (the main block's rows); `at` gives each part's first element of op(A), op(B)
// and C in the caller's arrays.
struct PeelPart {
  Problem problem;
  long long a_at = 0, b_at = 0, c_at = 0;
};
std::vector<PeelPart> peel_parts(const Problem& p, const Peel& peel);

// Whether a GEMV reads x from a contiguous copy gathered first (one 2D copy into the workspace): a
// GEMV whose rows are contiguous reads x once per row, so x with each element in a sector of its
// own (incx >= kGatherIncrement, as a row-major product's column edge reads B's last column) costs
// M·K sectors instead of M·K·4 bytes: 2-4x the GEMV at 3073-8193 rows (perf-log 104). Closer
// elements share sectors, and the copy's launch cost more than it saved at incx 5 (perf-log 105).
// Worth a copy from kGatherElements of the matrix and kGatherRows rows (a GEMV problem: row-major,
// x K x 1 with ldb = its increment).
constexpr long long kGatherRows = 64, kGatherElements = 1ll << 22, kGatherIncrement = 8;
bool gathers_x(const Problem& gemv);

// The GEMV problem of a vector route: op(A) (gemv_n) or op(B)ᵀ (gemv_m) as a row-major A,
// transposed where its rows are strided, with the vector's and the result's increments as the
// leading dimensions of the one-column x and y. Not normalized (the lab's GEMV problems have unit
// increments only); the sizes and strides were checked as the GEMM problem.
Problem vector_problem(const Problem& canonical, Route r);

// A GEMV configuration whose reduction is not split across blocks (`splits` = 1 where the family
// has it): it needs no workspace, the library's GEMV plan when none can be had.
std::string unsplit_gemv(const std::string& family, const std::string& params);

// tensor_fp32's sums of FP32 runs (accum=fp64tile) from this K on: below it a run holds too much of
// K and the error is FP32's (the accuracy study, perf-log 40).
constexpr long long kTileSumsMinK = 32;
// A GEMV's fp64tile sums below this many outputs: against FP64 sums in the same configurations
// (H200, the corpus's vector products, runs 19e5683 and ced6969) up to 15 % faster below it (most
// 0-8 %, the worst 2.6 % slower), 3-8 % slower on the four gemv-block GEMVs of 12288 to 32768
// outputs (tf4096 and tf8192 qkv and up); why is not known (perf-log 110).
constexpr long long kTileSumsMaxRows = 12288;

// A configuration in a math mode's arithmetic: tensor_fp32 gives the CUDA-core families that have
// it FP64 accumulators (accum=fp64; a GEMV of reduction length k >= kTileSumsMinK and fewer than
// kTileSumsMaxRows outputs fp64tile, FP32 runs of four products added in FP64, where its
// configuration takes it), so the GEMV routes and the no-workspace fallback meet the
// mode's contract as the dispatcher's choices do; other modes and families unchanged.
std::string with_math(const std::string& family, const std::string& params, MathMode math, long long k = 0,
                      long long rows = 0);
// Whether that form meets the family's constraints: FP64 sums may not fit where FP32 ones did
// (gemv-columns' partial sums in shared memory), and such a configuration is not run in that mode.
bool fits_math(const std::string& family, const std::string& params, MathMode math, long long k = 0);

// A family's defaults in a math mode's arithmetic (k: with_math's): the library's configuration
// where nothing else decides.
std::string default_params(const std::string& family, MathMode math, long long k = 0);

// Every (family, params) the dispatcher can pick on this architecture: built ahead of time.
std::vector<std::pair<std::string, std::string>> dispatch_configurations(int arch);

// Workspace bounds: split-K partial sums take at most this much (and a sixteenth of memory);
// tensor-core packed operands at most a quarter of memory.
constexpr size_t kMaxSplitWorkspace = size_t(256) << 20;

}  // namespace gemmlab
