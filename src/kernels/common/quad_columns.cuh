// Where a warp keeps per-column values (an exponent, a scale) of a WIDTH-wide tile whose
// accumulators it holds as wgmma quads (hopper::each_quad_at: quad j of a lane covers columns
// 8j + 2 (lane % 4) + {0, 1}): lane s holds column 16g + 8p + 2 (s % 4) + t in its register
// 2 (2 (g / 8) + p) + t, where g % 8 = s / 4. Every column is held once, a lane holds WIDTH / 32 (at
// least 4 registers), and a quad's two columns sit in one register index of one lane, so each is a
// single shuffle (hopper::QuadColumns). Plain C++ as well, so that the host tests check the very
// mapping the kernels use.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define QUAD_HD __host__ __device__
#else
#define QUAD_HD
#endif

namespace quad {

// Registers a lane gives a WIDTH-wide tile's columns.
QUAD_HD constexpr int registers(int width) { return width <= 128 ? 4 : width / 32; }
// The column lane `lane` holds in register k (past the tile's width where a narrow tile leaves it unused).
QUAD_HD constexpr int held_column(int lane, int k) {
  return 16 * (8 * (k / 4) + lane / 4) + 8 * (k / 2 % 2) + 2 * (lane % 4) + k % 2;
}
// The lane holding column 8j + 2 (lane % 4) + t of quad j, for every t, and its register.
QUAD_HD constexpr int holder(int j, int lane) { return 4 * (j / 2 % 8) + lane % 4; }
QUAD_HD constexpr int slot(int j, int t) { return 2 * (2 * (j / 16) + j % 2) + t; }

}  // namespace quad
