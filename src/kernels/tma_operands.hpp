#pragma once
// How a family that reads the caller's operands through TMA describes them: the rules TMA sets on
// an operand's layout and the descriptor's shape, without the driver (launch/tma.hpp encodes it).
#include <string>

#include "gemmlab/problem.hpp"

namespace gemmlab {

// How one operand (op(A) as M x K, or op(B)ᵀ as N x K: `outer` x `k`, element (o, kk) at
// o·s_outer + kk·s_k floats) is described to TMA in its own layout: dimension 0 is the contiguous
// one (k when k_contig, else outer), the box is box_outer x box_k, and shared memory receives it
// row by row of dimension 0: as it is, or (swizzle_k, a K-contiguous box of 32, 64 or 128-byte
// rows) with TMA's swizzle of that row length, which moves the rows' 16-byte chunks so that the
// same k of 8 adjacent rows falls in different banks.
struct OperandMap {
  unsigned long long dims[2] = {0, 0};  // elements, contiguous dimension first
  unsigned long long row_bytes = 0;     // stride of dimension 1
  unsigned box[2] = {0, 0};
  unsigned swizzle_bytes = 0;  // 0: none; 32, 64 or 128
};
// Empty when TMA can read the operand in place; otherwise why not (one line).
std::string operand_map_problem(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                                const void* base);
// What no copy of the operand fixes (sizes, a strided contiguous dimension): empty when TMA can
// read it in place or from a staged copy (operand_staging).
std::string operand_layout_problem(long long outer, long long k, long long s_outer, long long s_k, bool k_contig);

// A copy of the operand TMA can read where the caller's cannot be (leading dimension not a
// multiple of 4 floats, or a base not 16-byte aligned): `rows` rows of `row_floats` contiguous
// floats, `stride` floats apart, copied to rows of `pitch` floats (row_floats rounded up to 4) in
// a workspace (one copy launch for both operands of a call). pitch = 0: read in place.
struct OperandStaging {
  long long rows = 0, row_floats = 0, stride = 0, pitch = 0;
  long long floats() const { return pitch * rows; }
};
// How an operand that operand_layout_problem accepts is read: in place or staged.
OperandStaging operand_staging(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                               const void* base);
// op(A) and op(B)ᵀ of a row-major-C (canonical) problem whose operands start 16-byte aligned.
struct ProblemStaging {
  OperandStaging a, b;
  long long floats() const { return a.floats() + b.floats(); }
};
ProblemStaging problem_staging(const Problem& canonical);
// Throws UsageError with operand_map_problem's reason, or for a swizzle of another row length.
OperandMap describe_operand_map(long long outer, long long k, long long s_outer, long long s_k, bool k_contig,
                                int box_outer, int box_k, bool swizzle_k = false);

}  // namespace gemmlab
