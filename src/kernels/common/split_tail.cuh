// The order persistent blocks walk the tiles in (banded_tile, BandedWalk), and the persistent tile
// schedule of the Hopper families with its tail: the tiles that fill whole waves of the grid are
// computed whole, one block each; those of the last, partial wave (every tile when there are fewer
// tiles than blocks) are split (each tile's K `splits` ways) or streamed (stream-K: the tail's K
// tiles in equal shares, one per block), so that the last wave keeps every SM busy instead of
// leaving most idle. Each part writes its partial sums to the workspace; the block that finishes a
// tile's last part adds them (tail::last_arrival, add_partials). Plain C++ as well, so that the
// host model and tests share it.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define TAIL_HD __host__ __device__
#else
#define TAIL_HD
#endif

namespace tail {

// One unit of a block's work: K tiles [k0, k1) of output tile `tile` (none where tile < 0: past the
// end of a block's share of the stream; a split may have no K tiles, and still counts); split -1
// when the unit computes the whole tile, else which of the tile's `parts` it is, its partial sums in
// workspace slot `first + split` (a tile's parts in slots first .. first + parts - 1).
struct Unit {
  long long tile;
  int k0, k1, split;
  long long first;
  int parts;
};

// Two ways to share out the tiles that do not fill a wave of `workers` blocks:
// - split (stream = false): whole waves of whole tiles; the tiles of the last, partial wave have
//   their K split `splits` ways, the units dealt to the blocks in turn.
// - stream (stream-K): whole waves but the last; the last whole wave and the partial one (the
//   partial one alone when it is all there is) form one run of K tiles, cut into `workers` equal
//   shares, block b taking share b: a share spans tile boundaries, and each tile it touches is a
//   part of that tile. A block has at most `segments` units in the stream.
struct Schedule {
  long long tiles;    // output tiles
  long long whole;    // the first `whole` tiles are computed whole
  int splits;         // ways the other tiles' K is split (1 in the stream)
  int ktiles;         // K tiles of a whole tile
  // Blocks of the grid; 32-bit: as a 64-bit value kept live over hopper-simt's main loop it spilled
  // the row-major NT binary (perf-log 107).
  int workers;
  bool stream;
  int segments;  // the stream: units per block

  // The stream's K tiles, and the block that owns K tile x of it.
  TAIL_HD long long run() const { return (tiles - whole) * ktiles; }
  TAIL_HD long long owner(long long x) const { return ((x + 1) * workers + run() - 1) / run() - 1; }
  TAIL_HD long long units() const {
    return whole + (stream ? workers * segments : (tiles - whole) * splits);
  }
  // Unit u: whole tiles first (block b takes units b, b + workers, ...), then the tail's units.
  // Split: a tile's splits side by side, split z taking K tiles [ktiles·z/splits, ktiles·(z+1)/splits).
  // Stream: unit whole + i·workers + b is the i-th tile that block b's share [x0, x1) touches; the
  // tile's parts are the blocks owner(its first K tile) .. owner(its last), in slots b + tile index
  // (unique: along the run both grow, one of them strictly).
  TAIL_HD Unit unit(long long u) const {
    if (u < whole) return {u, 0, ktiles, -1, 0, 1};
    const long long t = u - whole;
    if (!stream) {
      const int z = int(t % splits);
      const long long tile = whole + t / splits;
      return {tile, int((long long)ktiles * z / splits), int((long long)ktiles * (z + 1) / splits), z,
              (tile - whole) * splits, splits};
    }
    const long long b = t % workers, x0 = b * run() / workers, x1 = (b + 1) * run() / workers;
    const long long j = x0 / ktiles + t / workers, lo = j * ktiles, hi = lo + ktiles;
    const long long from = x0 > lo ? x0 : lo, to = x1 < hi ? x1 : hi;
    if (from >= to) return {-1, 0, 0, -1, 0, 1};
    const long long f = owner(lo), parts = owner(hi - 1) - f + 1;
    return {whole + j, int(from - lo), int(to - lo), parts > 1 ? int(b - f) : -1, f + j, int(parts)};
  }
  // Workspace slots the split parts use.
  TAIL_HD long long slots() const { return stream ? workers + (tiles - whole) : (tiles - whole) * splits; }
};

// `blocks` persistent blocks: what the last wave leaves (tiles % blocks) is split, when splits > 1;
// or, with `stream`, streamed with the last whole wave before it, when every block gets a K tile of it.
TAIL_HD inline Schedule schedule(long long tiles, long long blocks, int splits, int ktiles, bool stream = false) {
  const long long tail = tiles % blocks;
  if (stream) {
    const long long streamed = tail + (tiles > blocks ? blocks : 0);
    if (tail == 0 || streamed * ktiles < blocks) return {tiles, tiles, 1, ktiles, int(blocks), false, 0};
    const long long share = (streamed * ktiles + blocks - 1) / blocks;
    return {tiles, tiles - streamed, 1, ktiles, int(blocks), true, int((share + ktiles - 2) / ktiles + 1)};
  }
  const long long split = splits > 1 ? tail : 0;
  return {tiles, tiles - split, split ? splits : 1, ktiles, int(blocks), false, 0};
}

// The tile a persistent block takes at step `t` of its sequence: bands of `group` tile rows, column
// by column, so that the blocks running together share operand tiles in L2.
TAIL_HD inline void banded_tile(long long t, long long tiles_m, long long tiles_n, int group, long long& tm,
                                long long& tn) {
  const long long band = (long long)group * tiles_n, first = t / band * group;
  const long long rows = group < tiles_m - first ? group : tiles_m - first, in = t % band;
  tm = first + in % rows;
  tn = in / rows;
}

// A walk over banded_tile's order from tile `start`, `stride` tiles a step. A step costs an add and a
// compare: a division only where it crosses a band (two 64-bit ones per step cost more than a
// short-K dmma tile's arithmetic), and full bands divide by the constant GROUP_ROWS.
template <int GROUP_ROWS>
struct BandedWalk {
  // 32 bits: the tiles are fewer than 2^31 (tiled::grid_limit) and a stride is one grid.
  unsigned tiles_m, tiles_n, stride, first = 0, in;  // the band's first tile row; the position in it
  unsigned rows;                                     // tile rows of this band

  TAIL_HD BandedWalk(unsigned tiles_m_, unsigned tiles_n_, unsigned start, unsigned stride_)
      : tiles_m(tiles_m_), tiles_n(tiles_n_), stride(stride_), in(start) {
    rows = tiles_m < GROUP_ROWS ? tiles_m : GROUP_ROWS;
    settle();
  }
  TAIL_HD void settle() {
    const unsigned long long band = (unsigned long long)GROUP_ROWS * tiles_n;
    if (in < band || rows < GROUP_ROWS) return;  // the last band is the only one short of rows
    const unsigned past = unsigned(in / band), left = (tiles_m - first) / GROUP_ROWS;
    const unsigned bands = past < left ? past : left;
    first += bands * GROUP_ROWS, in -= unsigned(bands * band);
    rows = tiles_m - first < GROUP_ROWS ? tiles_m - first : GROUP_ROWS;
  }
  TAIL_HD void next() { in += stride, settle(); }
  TAIL_HD void origin(long long& tm, long long& tn) const {
    if (rows == GROUP_ROWS)
      tm = first + in % GROUP_ROWS, tn = in / GROUP_ROWS;
    else
      tm = first + in % rows, tn = in / rows;
  }
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// After this block's threads (the first `threads` of it, all calling) wrote a split's partial sums:
// counts the arrival on the tile's counter and returns, in every one of those threads, whether this
// block was the tile's last split (it then adds them, and leaves the counter zero). The fence makes
// the partial sums visible before the arrival is counted; the last block reads the others' with
// ld.cg (L2), since its L1 may hold stale lines of the workspace from an earlier call.
__device__ inline bool last_arrival(unsigned* counter, int splits, int threads, bool* flag) {
  __threadfence();
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
  if (threadIdx.x == 0) *flag = atomicAdd(counter, 1u) == unsigned(splits - 1);
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
  const bool last = *flag;
  if (last) __threadfence();
  return last;
}

// A split's partial sums, in the workspace as each thread holds them: slot after slot (a slot per
// tail tile and split), R x C registers per thread, 4 at a time, the threads' float4s side by side,
// so that a warp writes and reads 512 contiguous bytes an instruction (the fragment layout's scalar
// stores to rows of C reach a tenth of the bandwidth: perf-log 17).
template <int R, int C>
__device__ inline float4* partial(float* workspace, long long slot, int group, int thread, int threads) {
  return reinterpret_cast<float4*>(workspace) + (slot * (R * C / 4) + group) * threads + thread;
}
template <int R, int C>
__device__ inline void store_partial(float* workspace, long long slot, int thread, int threads, const float (&v)[R][C]) {
  static_assert(C % 4 == 0, "whole float4s per row of registers");
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; j += 4)
      *partial<R, C>(workspace, slot, (i * C + j) / 4, thread, threads) =
          make_float4(v[i][j], v[i][j + 1], v[i][j + 2], v[i][j + 3]);
}
// v = the sum of the partial sums of slots first .. first + splits - 1, in split order: the result
// does not depend on which split finished last (the caller's own partial is read back too).
template <int R, int C>
__device__ inline void add_partials(float* workspace, long long first, int splits, int thread, int threads,
                                    float (&v)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) v[i][j] = 0.0f;
  for (int z = 0; z < splits; ++z)
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
      for (int j = 0; j < C; j += 4) {
        const float4 x = __ldcg(partial<R, C>(workspace, first + z, (i * C + j) / 4, thread, threads));
        v[i][j] += x.x, v[i][j + 1] += x.y, v[i][j + 2] += x.z, v[i][j + 3] += x.w;
      }
}
#endif

}  // namespace tail
