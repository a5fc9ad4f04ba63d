#include "kernels/tma_operands.hpp"

#include <cstdint>

#include "gemmlab/error.hpp"

namespace gemmlab {

// TMA's rules (CUDA driver API, cuTensorMapEncodeTiled): a 16-byte aligned base, strides that are
// multiples of 16 bytes below 2^40, dimensions below 2^32 (the kernels' coordinates are 32-bit
// signed: below 2^31), boxes of at most 256 elements a side whose contiguous side is a multiple of
// 16 bytes.
std::string operand_layout_problem(long long outer, long long k, long long s_outer, long long s_k, bool k_contig) {
  if (outer < 1 || k < 1) return "empty operand";
  if (outer >= (1ll << 31) || k >= (1ll << 31)) return "TMA coordinates are 32-bit: M, N and K must stay below 2^31";
  if ((k_contig ? s_k : s_outer) != 1) return "TMA reads an operand whose contiguous dimension has stride 1";
  return {};
}

std::string operand_map_problem(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                                const void* base) {
  if (auto why = operand_layout_problem(outer, k, s_outer, s_k, k_contig); !why.empty()) return why;
  const long long stride = k_contig ? s_outer : s_k;
  if (stride % 4 || stride <= 0 || stride >= (1ll << 38))
    return "TMA needs leading dimensions that are multiples of 4 floats (16 bytes); this one is " +
           std::to_string(stride);
  if (reinterpret_cast<std::uintptr_t>(base) % 16) return "TMA needs operands that start 16-byte aligned";
  return {};
}

OperandStaging operand_staging(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                               const void* base) {
  if (operand_map_problem(outer, k, s_outer, s_k, k_contig, base).empty()) return {};
  const long long row_floats = k_contig ? k : outer;
  return {k_contig ? outer : k, row_floats, k_contig ? s_outer : s_k, (row_floats + 3) / 4 * 4};
}

ProblemStaging problem_staging(const Problem& c) {
  static const float aligned[4] = {};
  auto sa = op_a_strides(c), sb = op_b_strides(c);
  return {operand_staging(c.m, c.k, sa.row, sa.col, c.trans_a == Trans::no, aligned),
          operand_staging(c.n, c.k, sb.col, sb.row, c.trans_b == Trans::yes, aligned)};
}

OperandMap describe_operand_map(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                                int box_outer, int box_k, bool swizzle_k) {
  static const float aligned[4] = {};
  if (auto why = operand_map_problem(outer, k, s_outer, s_k, k_contig, aligned); !why.empty()) throw UsageError(why);
  if (box_outer < 1 || box_outer > 256 || box_k < 1 || box_k > 256 || (k_contig ? box_k : box_outer) % 4)
    throw UsageError("a TMA box is 1 to 256 elements a side, its contiguous side a multiple of 4 floats");
  OperandMap d;
  d.dims[0] = (unsigned long long)(k_contig ? k : outer);
  d.dims[1] = (unsigned long long)(k_contig ? outer : k);
  d.row_bytes = (unsigned long long)(k_contig ? s_outer : s_k) * 4;
  d.box[0] = unsigned(k_contig ? box_k : box_outer);
  d.box[1] = unsigned(k_contig ? box_outer : box_k);
  if (swizzle_k && k_contig) {
    if (box_k != 8 && box_k != 16 && box_k != 32)
      throw UsageError("TMA swizzles rows of 32, 64 or 128 bytes: a K-contiguous box of " + std::to_string(box_k) +
                       " floats is not one");
    d.swizzle_bytes = unsigned(box_k * 4);
  }
  return d;
}

}  // namespace gemmlab
