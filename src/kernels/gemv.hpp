#pragma once
// Host-side helpers shared by the GEMV families' descriptions.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/family.hpp"
#include "kernels/tiled.hpp"

namespace gemmlab::gemv {

inline std::string define(const char* name, long long v) { return std::string("-D") + name + "=" + std::to_string(v); }

// Each output is the dot product of a contiguous row of op(A): row-major A, or column-major Aᵀ.
inline bool rows_contiguous(const Problem& p) { return op_a_strides(p).col == 1; }

// For families that read contiguous rows with wide loads; the other layouts are gemv-columns'.
inline std::string needs_rows(const Problem& p) {
  if (rows_contiguous(p)) return {};
  return "needs contiguous rows of op(A) (row-major N or column-major T); gemv-columns computes this layout";
}

inline std::string needs_columns(const Problem& p) {
  if (!rows_contiguous(p) || p.m == 1) return {};
  return "needs contiguous columns of op(A) (column-major N or row-major T); gemv-vectorized computes this layout";
}

// The sums: FP32 (cuBLAS's arithmetic), FP64 (exact products, one rounding) or fp64tile, short runs
// of products summed in FP32 and added in FP64 (a 16-byte group's four; gemv-columns: its UNROLL
// steps): within 2 % of FP32 sums on short rows, between them and FP64 on long ones (perf-log 110).
inline ParamSpec accum_param() {
  return {"accum", {0}, 0, 2,
          "accumulators: FP32 (cuBLAS SGEMV's arithmetic), FP64 (exact products, one rounding) or fp64tile "
          "(FP32 sums of each 16-byte group's products, or of gemv-columns' unrolled steps, added in FP64)",
          {"fp32", "fp64", "fp64tile"}};
}

inline bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

inline void require_power_of_two(std::vector<std::string>& out, const char* name, int x) {
  if (!power_of_two(x)) out.push_back(std::string(name) + " = " + std::to_string(x) + " must be a power of two");
}

inline void require_threads(std::vector<std::string>& out, int threads) {
  if (threads % 32 != 0)
    out.push_back(std::to_string(threads) + " threads per block is not a whole number of warps");
  if (threads > kMaxThreadsPerBlock)
    out.push_back(std::to_string(threads) + " threads per block, over the limit of " +
                  std::to_string(kMaxThreadsPerBlock));
}

// A reduction split over blocks (the `splits` parameter, 0 for this choice): as many blocks as the
// GPU holds at once, one full wave, every block resident from the start, no tail (measured on the
// H100: 1 to 10 % faster than 1024 blocks, perf-log entry 8), as long as each split keeps at least
// `min_len` steps of the reduction. Without a GPU (resident_blocks = 0), 1024 blocks stand in for
// the wave.
inline int wave_splits(int param, long long out_blocks, long long k, long long min_len, int resident_blocks) {
  if (param > 0) return int(std::min<long long>(param, std::max<long long>(1, k)));
  long long wave = resident_blocks > 0 ? resident_blocks : 1024;
  long long by_blocks = std::max<long long>(1, wave / std::max<long long>(1, out_blocks));
  long long by_length = std::max<long long>(1, k / min_len);
  return int(std::clamp<long long>(std::min(by_blocks, by_length), 1, 1024));
}

inline unsigned blocks(long long items, long long per_block) { return unsigned((items + per_block - 1) / per_block); }

// gridDim.x is limited to 2^31 - 1 blocks.
inline std::string grid_limit(long long items, long long per_block) {
  if ((items + per_block - 1) / per_block > 2147483647LL) return "the grid would exceed 2^31-1 blocks";
  return {};
}

}  // namespace gemmlab::gemv

// ---- the analytic model's helpers ----
namespace gemmlab::gemv {

// A GEMV family's model before its counts: no shared memory unless it says so (y's store comes
// from tiled::add_epilogue, with N = 1).
inline KernelModel base_model() {
  KernelModel m;
  m.shared_load_inst = m.shared_store_inst = m.shared_load_bytes = 0;
  return m;
}

// Load instructions of dot_row (gemv_common.cuh) for the warp whose first lane is `lane`, on a
// 16-byte aligned row of k floats: NUNROLL 16-byte loads of A and x per unrolled step, then the
// remaining 16-byte steps, then the scalar tail. x unaligned takes 4 scalar loads per 16 bytes.
inline double dot_row_loads(long long k, int lanes, int unroll, int lane, bool x_aligned) {
  const long long n4 = k / 4;
  const double x_loads = x_aligned ? 1 : 4;
  long long q = lane, steps = 0, rest = 0;
  if (q + (unroll - 1) * lanes < n4) {
    steps = (n4 - 1 - q - (long long)(unroll - 1) * lanes) / ((long long)unroll * lanes) + 1;
    q += steps * unroll * lanes;
  }
  if (q < n4) rest = (n4 - q + lanes - 1) / lanes;
  const double tail = lane < k % 4 ? 1 : 0;  // one step, for the warp holding the first lanes
  return double(steps) * unroll * (1 + x_loads) + double(rest) * (1 + x_loads) + 2 * tail;
}

}  // namespace gemmlab::gemv
