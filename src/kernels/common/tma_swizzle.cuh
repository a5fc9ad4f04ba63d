// TMA's swizzle of a tile whose rows are one swizzle span (32, 64 or 128 bytes), as the tensor
// memory accelerator writes it and wgmma reads it: within each 1024-byte period, the 16-byte chunks
// of each 128-byte line trade places by XOR with the line's position in the period (address bits
// 4.. XOR bits 7.., as many bits as a row has chunks). Reading the same chunk of 8 consecutive rows
// then meets 8 different bank groups. Plain C++ as well, so that the host's bank model and tests
// use the very function the kernels do.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SWIZZLE_HD __host__ __device__
#else
#define SWIZZLE_HD
#endif

namespace tma {

// Where byte `offset` of a tile (from a 1024-byte aligned start) lies once swizzled for rows of
// `row_bytes`. The same XOR applies to an absolute shared address of such a tile.
SWIZZLE_HD constexpr unsigned swizzled(unsigned offset, unsigned row_bytes) {
  return offset ^ (((offset >> 7) & (row_bytes / 16 - 1)) << 4);
}

}  // namespace tma
