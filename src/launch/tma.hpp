#pragma once
// TMA descriptors (CUtensorMap) for the families that read operands through the tensor memory
// accelerator. Encoded by the driver (cuTensorMapEncodeTiled, reached through the runtime's
// entry-point query so that gemmlab does not link libcuda).
#include "kernels/tma_operands.hpp"

namespace gemmlab {

// A descriptor of `planes` planes of rows x k floats (row stride kp floats, plane stride rows·kp)
// at `base`, loaded in boxes of box_rows x box_k, swizzled in rows of box_k · 4 bytes (128, 64, 32).
// Reads past k or rows fill zeros. Throws RuntimeError when the driver refuses.
void encode_kmajor_map(void* map, const float* base, long long rows, long long k, long long kp, int planes,
                       int box_rows, int box_k);

// The same for `planes` planes of rows x kp int8 values (kp a multiple of 128), boxes of
// box_rows x 128 swizzled in 128-byte rows.
void encode_int8_planes_map(void* map, const void* base, long long rows, long long kp, int planes, int box_rows);

// The descriptor of an operand read in place (describe_operand_map) at this call's address, zeros
// past the edges. Throws UsageError for an address that is not 16-byte aligned.
void encode_operand_map(void* map, const float* base, const OperandMap& d);

}  // namespace gemmlab
