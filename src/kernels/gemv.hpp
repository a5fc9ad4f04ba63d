#pragma once
// Host-side helpers shared by the GEMV families' descriptions.
#include <string>
#include <vector>

#include "gemmlab/family.hpp"

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

inline unsigned blocks(long long items, long long per_block) { return unsigned((items + per_block - 1) / per_block); }

// gridDim.x is limited to 2^31 - 1 blocks.
inline std::string grid_limit(long long items, long long per_block) {
  if ((items + per_block - 1) / per_block > 2147483647LL) return "the grid would exceed 2^31-1 blocks";
  return {};
}

}  // namespace gemmlab::gemv
