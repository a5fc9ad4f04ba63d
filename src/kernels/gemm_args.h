// The one argument every GEMM family kernel takes, by value. Shared by the host (which fills it)
// and the kernels (compiled by NVRTC, which sees this file as "gemm_args.h"), so the two can never
// disagree about the layout. Element (r, c) of op(A), op(B) and C lives at ptr[r*row + c*col]:
// layouts and transposes are already folded into the strides.
#pragma once

struct GemmArgs {
  long long m, n, k;
  float alpha, beta;
  const float* a;
  long long a_row, a_col;
  const float* b;
  long long b_row, b_col;
  float* c;
  long long c_row, c_col;
  // Split-K: gridDim.z splits write raw partial products here, [split][m][n], summed by a
  // second kernel that applies alpha and beta. Null when the family does not split.
  float* workspace;
  // Arrival counters of the families whose last block adds the splits (gemv-columns): zero
  // before every call, and left zero by it. A buffer of their own, so that no partial sums of
  // an earlier problem can sit where a counter is expected.
  unsigned* counters;
  // What a family's pre-pass wrote for its kernel (ozaki: the rows' exponents and the data's
  // spread, ozaki_math.cuh's Info). Null for the others.
  const void* extra;
};

// TMA descriptors (each a CUtensorMap: 128 opaque bytes, 128-byte aligned as cuda.h declares it) of the operands a
// family reads through the tensor memory accelerator: the second parameter of such kernels,
// __grid_constant__, since the TMA unit reads descriptors from parameter or global memory.
struct alignas(128) TensorMaps {
  unsigned long long a[16], b[16];
};

// The staging copy's argument (families whose operands TMA reads: TmaOperands::stage_entry): the
// operands TMA cannot read as given, `rows` rows of `row_floats` floats `stride` floats apart,
// each copied to rows of `row_floats` rounded up to 4 floats at `dst`. One launch copies
// gridDim.z of them (operand[0] first).
struct StagedRows {
  struct Operand {
    float* dst;
    const float* src;
    long long stride, rows, row_floats;
  } operand[2];
};
