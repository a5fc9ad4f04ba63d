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

// The swizzle's period is 8 rows of any span (the line bits it reads repeat every 8 · row_bytes).
constexpr unsigned kPeriodRows = 8;

// Where byte `byte` (under row_bytes) of the row `rows` rows after a row starting at `row_start`
// lies once swizzled, given that row's swizzled start: where rows is a whole number of periods the
// two rows are swizzled alike, so one XOR serves every such row and the rest is an immediate offset.
// Equal to swizzled(start + rows · row_bytes + byte) there (tests/test_model.cpp).
SWIZZLE_HD constexpr unsigned swizzled_rows_on(unsigned swizzled_row_start, unsigned byte, unsigned rows,
                                               unsigned row_bytes) {
  return (swizzled_row_start ^ byte) + rows * row_bytes;
}

}  // namespace tma
