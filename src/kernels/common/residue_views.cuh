// Residue views: how a TMA family reads an operand whose rows TMA cannot address. TMA needs a
// 16-byte aligned base and row strides that are multiples of 16 bytes; a leading dimension that is
// not a multiple of 4 floats (or a base off a 16-byte boundary) gives neither. But rows r, r + 4,
// r + 8, ... are 16·ld bytes apart whatever ld is: each such class of rows is a matrix TMA can read,
// from the 16-byte boundary at or before row r's start, its contiguous dimension widened by the
// `shift` floats in front (the kernel adds the shift to that coordinate; elements past the row's end
// are out of bounds, zero-filled). So an operand is read as kViews views, each tile as kViews boxes
// of a quarter of its rows, written one after another: the tile's row order in shared memory is
// view-major. A K-contiguous tile (rows = M or N) then holds row 4q + r at position r·(OUTER/4) + q;
// an outer-contiguous one (rows = k) holds k = 4q + r at position r·(BK/4) + q. Plain C++ as well,
// so that the host's tests check the very mapping the kernels use.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VIEWS_HD __host__ __device__
#else
#define VIEWS_HD
#endif

namespace views {

constexpr int kViews = 4;  // rows 16 bytes · ld apart: 4 floats

// The row at shared-memory position `p` of a tile of `rows` rows read through residue views.
VIEWS_HD constexpr int row_at(int p, int rows) { return kViews * (p % (rows / kViews)) + p / (rows / kViews); }
// The position of row `r` of such a tile.
VIEWS_HD constexpr int position_of(int r, int rows) { return (r % kViews) * (rows / kViews) + r / kViews; }

}  // namespace views
