// hopper-simt: FP32 GEMM on the CUDA cores, fed the Hopper way (sm_90a: TMA, setmaxnreg).
//
// warptiled spends a third of its instructions on the addresses and bounds checks of its cp.async
// copies (perf-log entry 3). Here no consumer thread copies anything: one thread of a producer
// warpgroup moves each K tile of op(A) and op(B) with two TMA loads (the tensor memory accelerator
// computes the addresses and fills zeros outside the matrix, so edge tiles need no checks) into
// STAGES slots guarded by mbarriers (full: the bytes arrived; empty: every consumer warp is done
// with the slot). The consumer warps (whole warpgroups, given the producer's registers with
// setmaxnreg) only read shared memory and issue FFMAs: block tile BM x BN, warp tile WM x WN,
// thread tile TM x TN, as in warptiled. The grid is persistent: each block walks tiles blockIdx.x,
// + gridDim.x, ... in bands of GROUP tile rows (L2 reuse). With gridDim.z > 1 the tiles of the last,
// partial wave (every tile when there are fewer tiles than blocks) have their K split gridDim.z
// ways; with TAIL_STREAM the last two waves' K tiles are shared out equally (stream-K; both
// split_tail.cuh): the last wave then keeps every SM busy, and a tile's last part to finish adds
// the partial sums in part order (bitwise the same run to run).
//
// TMA copies a box in the operand's own layout: it cannot transpose 4-byte elements. A K-contiguous
// operand (row-major A, transposed B) lands as OUTER rows of BK floats, and a thread reads 4 k of
// one row per 16-byte load; an outer-contiguous one lands as BK rows of OUTER floats, and a thread
// reads one k of 4 rows (columns) per load. Either way a chunk of 4 k costs TM + TN 16-byte loads for
// 4·TM·TN FFMAs. A thread's rows of a K-contiguous tile are interleaved (row = lane / LANES_N +
// i · LANES_M), so the 8 lanes of a quarter-warp (one shared-memory wavefront of 16-byte loads)
// read the same 4 k of 8 adjacent rows. Rows of BK floats start BK·4 bytes apart, so without more
// those 8 loads meet the same banks (8-way at BK = 32: op(B) K-contiguous ran at a third of NN's
// rate, perf-log 21). SWIZZLE_A and SWIZZLE_B (the host sets them where a quarter-warp reads
// several rows of that operand's tile) have TMA store such a tile with the swizzle of its row
// length (32, 64 or 128 bytes): the 16-byte chunks of each 128-byte line trade places by XOR with
// the line's position in its 1024-byte period, so the 8 rows' chunks land in 8 different bank groups.
#include "gemm_tile.cuh"
#include "hopper.cuh"
#include "split_tail.cuh"

constexpr int WARPS_N = BN / WN;
constexpr int CONSUMERS = (BM / WM) * WARPS_N;  // consumer warps, whole warpgroups
// The producer is a warpgroup of its own (one thread of it works): setmaxnreg moves registers
// between whole warpgroups. A lone producer warp would be a third warp on one of the SM's four
// register files (16K registers each), which caps every thread at 168 registers.
// Every warp starts with the launch's LAUNCH_REGS; the producer warpgroup gives all but
// PRODUCER_REGS back to the block's pool and the consumers take them in equal shares. An
// increase the pool cannot serve would wait forever, so CONSUMER_REGS never asks for more than
// the four producer warps release; where the launch already gives as many, nothing moves.
constexpr int NT = 32 * CONSUMERS + 128;
constexpr int PRODUCER_REGS = 56;  // at 40 its 64-bit tile arithmetic spills in some variants
constexpr int LAUNCH_REGS = 65536 / NT / 8 * 8 > 248 ? 248 : 65536 / NT / 8 * 8;
constexpr int SHARE = (LAUNCH_REGS + 4 * (LAUNCH_REGS - PRODUCER_REGS) / CONSUMERS) / 8 * 8;
constexpr int CONSUMER_REGS = SHARE > 240 ? 240 : SHARE;
constexpr bool REBALANCE = CONSUMER_REGS > LAUNCH_REGS;
static_assert(CONSUMERS % 4 == 0, "consumer warps fill whole warpgroups");
constexpr int LANES_N = WN / TN, LANES_M = WM / TM;
constexpr int KCHUNK = 4;  // k values per 16-byte load of a K-contiguous tile

// An operand's K tile in shared memory as TMA writes it: OUTER x BK, K-contiguous or not, swizzled
// or not (SWIZZLED: a K-contiguous tile TMA stored with the swizzle of its row length). Each tile
// starts 1024-byte aligned (what any TMA destination needs, and the swizzle's period).
template <int OUTER, bool K_CONTIG, bool SWIZZLED>
struct TmaTile {
  static constexpr int kBytes = (OUTER * BK * 4 + 1023) / 1024 * 1024;
  static_assert(!SWIZZLED || (K_CONTIG && (BK == 8 || BK == 16 || BK == 32)), "swizzled rows are 32 to 128 bytes");
  // K_CONTIG: k .. k+3 of row o (k a multiple of 4); otherwise rows o .. o+3 (o a multiple of 4) at k.
  __device__ static float4 read4(const float* s, int o, int k) {
    if (!SWIZZLED) return *reinterpret_cast<const float4*>(s + (K_CONTIG ? o * BK + k : k * OUTER + o));
    return hopper::lds128(tma::swizzled_rows_on(swizzled_row(s, o), unsigned(k * 4), 0, BK * 4));
  }
  // K_CONTIG: k .. k+3 of row o + i · STRIDE. Where STRIDE rows are whole swizzle periods, those rows
  // are swizzled as row o is: one LOP3 (row o's start XOR k's byte offset) serves every i, and the
  // rest are immediate offsets (perf-log 135); otherwise one LOP3 per load.
  template <int STRIDE>
  __device__ static float4 read4_rows_on(const float* s, int o, int i, int k) {
    if (!SWIZZLED || STRIDE % tma::kPeriodRows) return read4(s, o + i * STRIDE, k);
    return hopper::lds128(tma::swizzled_rows_on(swizzled_row(s, o), unsigned(k * 4), unsigned(i * STRIDE), BK * 4));
  }

 private:
  // A row's chunk bits are zero, so XOR with a chunk's byte offset finds the chunk in it.
  __device__ static unsigned swizzled_row(const float* s, int o) {
    return tma::swizzled(hopper::smem_addr(s) + unsigned(o * BK * 4), BK * 4);
  }
};
using TileA = TmaTile<BM, A_K_CONTIG, A_K_CONTIG && SWIZZLE_A>;
using TileB = TmaTile<BN, !B_N_CONTIG, !B_N_CONTIG && SWIZZLE_B>;
constexpr int STAGE_BYTES = TileA::kBytes + TileB::kBytes;

// Which rows and columns of the block tile a consumer thread owns. Along a dimension the operand
// is contiguous in (outer-contiguous tile), 4 adjacent values per 16-byte load: sub-tiles of 4
// strided across the warp tile, as warptiled. Along one it is not (K-contiguous tile), one value
// per load: interleaved, so that a quarter-warp reads adjacent rows (see above).
template <int LANES, bool K_CONTIG>
struct Owned {
  int first;  // the thread's first row (column) in the block tile
  __device__ Owned(int warp_origin, int lane_index)
      : first(warp_origin + (K_CONTIG ? lane_index : lane_index * 4)) {}
  __device__ int at(int i) const { return K_CONTIG ? first + i * LANES : first + (i / 4) * LANES * 4 + i % 4; }
};

// Which tile a unit of the schedule computes, in bands of GROUP tile rows.
__device__ inline void tile_origin(const tail::Unit& w, long long tiles_m, long long tiles_n, long long& m0,
                                   long long& n0) {
  long long tm, tn;
  tail::banded_tile(w.tile, tiles_m, tiles_n, GROUP, tm, tn);
  m0 = tm * BM, n0 = tn * BN;
}

// The producer: one thread issues both loads of every K tile of every unit this block computes.
__device__ inline void produce(const TensorMaps& maps, float* smem, unsigned long long* full, unsigned long long* empty,
                               const tail::Schedule& plan, long long tiles_m, long long tiles_n, long long worker,
                               long long workers) {
  int round_slot = 0;  // K tiles issued so far
  for (long long u = worker; u < plan.units(); u += workers) {
    const tail::Unit w = plan.unit(u);
    if (w.tile < 0) continue;
    long long m0, n0;
    tile_origin(w, tiles_m, tiles_n, m0, n0);
    for (int kt = w.k0; kt < w.k1; ++kt, ++round_slot) {
      const int s = round_slot % STAGES;
      hopper::mbar_wait(&empty[s], ((round_slot / STAGES) & 1) ^ 1);
      hopper::mbar_expect_bytes(&full[s], STAGE_BYTES);
      unsigned char* slot = reinterpret_cast<unsigned char*>(smem) + s * STAGE_BYTES;
      const int k0 = kt * BK;
      if (A_K_CONTIG) hopper::tma_load_2d(slot, &maps.a, k0, int(m0), &full[s]);
      else hopper::tma_load_2d(slot, &maps.a, int(m0), k0, &full[s]);
      if (B_N_CONTIG) hopper::tma_load_2d(slot + TileA::kBytes, &maps.b, int(n0), k0, &full[s]);
      else hopper::tma_load_2d(slot + TileA::kBytes, &maps.b, k0, int(n0), &full[s]);
    }
  }
}

// A K tile is read in chunks of 4 k: the thread's TM x 4 values of A, then B in steps, each the
// values of BSTEP columns at the chunk's 4 k (four columns one k per load where B is outer-
// contiguous, one column's four k per load where it is K-contiguous) and their FFMAs.
constexpr int BSTEP = B_N_CONTIG ? 4 : 1;
constexpr int STEPS = TN / BSTEP, CHUNKS = BK / KCHUNK;
using FragA = float[TM][KCHUNK];
using FragB = float[BSTEP][KCHUNK];

template <class RowsA>
__device__ inline void load_a(FragA& a, const float* As, const RowsA& rows, int k0) {
#pragma unroll
  for (int i = 0; i < TM; i += A_K_CONTIG ? 1 : 4)
#pragma unroll
    for (int kk = 0; kk < (A_K_CONTIG ? 1 : KCHUNK); ++kk) {
      const float4 v = A_K_CONTIG ? TileA::template read4_rows_on<LANES_M>(As, rows.first, i, k0)
                                  : TileA::read4(As, rows.at(i), k0 + kk);
      if (A_K_CONTIG) a[i][0] = v.x, a[i][1] = v.y, a[i][2] = v.z, a[i][3] = v.w;
      else a[i][kk] = v.x, a[i + 1][kk] = v.y, a[i + 2][kk] = v.z, a[i + 3][kk] = v.w;
    }
}

template <class ColsB>
__device__ inline void load_b(FragB& b, const float* Bs, const ColsB& cols, int k0, int step) {
  if (B_N_CONTIG) {
#pragma unroll
    for (int kk = 0; kk < KCHUNK; ++kk) {
      const float4 v = TileB::read4(Bs, cols.at(step * 4), k0 + kk);
      b[0][kk] = v.x, b[1][kk] = v.y, b[2][kk] = v.z, b[3][kk] = v.w;
    }
  } else {
    const float4 v = TileB::template read4_rows_on<LANES_N>(Bs, cols.first, step, k0);
    b[0][0] = v.x, b[0][1] = v.y, b[0][2] = v.z, b[0][3] = v.w;
  }
}

__device__ inline void fma_step(float (&acc)[TM][TN], const FragA& a, const FragB& b, int step) {
#pragma unroll
  for (int kk = 0; kk < KCHUNK; ++kk)
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int jj = 0; jj < BSTEP; ++jj)
        acc[i][step * BSTEP + jj] = fmaf(a[i][kk], b[jj][kk], acc[i][step * BSTEP + jj]);
}

// One K tile's FFMAs. FRAGMENTS == 1 (single): each step's loads just before its FFMAs (a step's B
// values are used at once: with A K-contiguous too, gathering a chunk's columns first made ptxas
// hoist loads until the defaults spilled). Otherwise the next step's B values are loaded before
// this step's FFMAs, into the other of two sets, so that each load has a step of FFMAs to arrive
// and writes no register those FFMAs read; the next chunk's A comes after the chunk's last FFMAs
// (2, double-b: 4·TM registers fewer, for 8x16) or before them into a second set (3, double).
// Measured (perf-log 59-60): 8x16 double-b where op(A) is outer-contiguous 0.88 → 0.955x cuBLAS
// at 4096³ TN; at 8x8 both cost 1.5 %, so the defaults stay single.
template <class RowsA, class ColsB>
__device__ inline void compute(float (&acc)[TM][TN], const float* As, const float* Bs, const RowsA& rows,
                               const ColsB& cols) {
  if (FRAGMENTS == 1) {
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
      FragA a;
      load_a(a, As, rows, c * KCHUNK);
#pragma unroll
      for (int t = 0; t < STEPS; ++t) {
        FragB b;
        load_b(b, Bs, cols, c * KCHUNK, t);
        fma_step(acc, a, b, t);
      }
    }
    return;
  }
  constexpr int A_SETS = FRAGMENTS == 3 ? 2 : 1;
  FragA a[A_SETS];
  FragB b[2];
  load_a(a[0], As, rows, 0);
  load_b(b[0], Bs, cols, 0, 0);
#pragma unroll
  for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
    for (int t = 0; t < STEPS; ++t) {
      const int n = c * STEPS + t;
      const bool next_chunk = t + 1 == STEPS && c + 1 < CHUNKS;
      if (n + 1 < CHUNKS * STEPS) load_b(b[(n + 1) % 2], Bs, cols, (n + 1) / STEPS * KCHUNK, (n + 1) % STEPS);
      if (A_SETS == 2 && next_chunk) load_a(a[(c + 1) % 2], As, rows, (c + 1) * KCHUNK);
      fma_step(acc, a[c % A_SETS], b[n % 2], t);
      if (A_SETS == 1 && next_chunk) load_a(a[0], As, rows, (c + 1) * KCHUNK);
    }
}

extern "C" __global__ void __launch_bounds__(NT, 1)
    gemm_hopper_simt(const __grid_constant__ GemmArgs g, const __grid_constant__ TensorMaps maps) {
  follow_previous_grid();
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(align_1024(smem_raw));
  unsigned long long* full = reinterpret_cast<unsigned long long*>(reinterpret_cast<unsigned char*>(smem) +
                                                                   STAGES * STAGE_BYTES);
  unsigned long long* empty = full + STAGES;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) init_pipeline(full, empty, STAGES, CONSUMERS);
  __syncthreads();

  // Every block of the grid is one worker of the schedule; gridDim.z is the split tail's ways.
  const long long tiles_m = (g.m + BM - 1) / BM, tiles_n = (g.n + BN - 1) / BN;
  const long long workers = (long long)gridDim.x * gridDim.z, worker = (long long)blockIdx.z * gridDim.x + blockIdx.x;
  const tail::Schedule plan =
      tail::schedule(tiles_m * tiles_n, workers, gridDim.z, int((g.k + BK - 1) / BK), TAIL_STREAM);

  if (warp >= CONSUMERS) {
    if (REBALANCE) regs_dealloc<PRODUCER_REGS>();
    if (warp == CONSUMERS && lane == 0) produce(maps, smem, full, empty, plan, tiles_m, tiles_n, worker, workers);
    return;
  }
  if (REBALANCE) regs_alloc<CONSUMER_REGS>();

  const Owned<LANES_M, A_K_CONTIG> rows((warp / WARPS_N) * WM, lane / LANES_N);
  const Owned<LANES_N, !B_N_CONTIG> cols((warp % WARPS_N) * WN, lane % LANES_N);
  // Four adjacent columns per 16-byte store where the thread owns them (B outer-contiguous).
  const bool vec = B_N_CONTIG && C_VEC;
  __shared__ bool last_split;
  int round_slot = 0;
  for (long long u = worker; u < plan.units(); u += workers) {
    const tail::Unit w = plan.unit(u);
    if (w.tile < 0) continue;  // past the end of this block's share of the stream
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    for (int kt = w.k0; kt < w.k1; ++kt, ++round_slot) {
      const int s = round_slot % STAGES;
      mbar_wait(&full[s], (round_slot / STAGES) & 1);
      const float* slot = reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(smem) + s * STAGE_BYTES);
      compute(acc, slot, slot + TileA::kBytes / 4, rows, cols);
      // The slot goes back once every lane's loads from it are done. The arrival alone does not
      // order the warp's shared loads before the producer's next TMA write into the slot (another
      // proxy): without the fence, tiles read while conflicted loads were still replaying came out
      // wrong (B K-contiguous at 8-way conflicts, perf-log entry 21).
      fence_proxy_async_shared();
      __syncwarp();
      if (lane == 0) mbar_arrive(&empty[s]);
    }
    if (w.split >= 0) {
      // A part of a tail tile: its partial sums go to the workspace; the tile's last part to arrive
      // adds them (all consumer threads together, named barrier 1) and stores the tile.
      tail::store_partial(g.workspace, w.first + w.split, threadIdx.x, 32 * CONSUMERS, acc);
      if (!tail::last_arrival(g.counters + w.tile, w.parts, 32 * CONSUMERS, &last_split)) continue;
      tail::add_partials(g.workspace, w.first, w.parts, threadIdx.x, 32 * CONSUMERS, acc);
      if (threadIdx.x == 0) g.counters[w.tile] = 0;
    }
    long long m0, n0;
    tile_origin(w, tiles_m, tiles_n, m0, n0);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      if (vec) {
#pragma unroll
        for (int j = 0; j < TN; j += 4) gl::store_c4(g, m0 + rows.at(i), n0 + cols.at(j), &acc[i][j], true);
        continue;
      }
      if (!B_N_CONTIG) {
#pragma unroll
        for (int j = 0; j < TN; ++j) gl::store_c(g, m0 + rows.at(i), n0 + cols.at(j), acc[i][j]);
        continue;
      }
      // Adjacent columns a float at a time (C's rows not 16-byte aligned): with beta, the row's old
      // values all read before any is written, one round trip to memory per row, not one per value
      // (a store may alias a later load; pad-1000, beta = 0.25, ran 19 us over beta = 0 with a read
      // before each write). Where B is K-contiguous the same cost 2 % at beta = 0 (perf-log 62).
      float old[TN];
#pragma unroll
      for (int j = 0; j < TN; ++j) old[j] = gl::old_c(g, m0 + rows.at(i), n0 + cols.at(j));
#pragma unroll
      for (int j = 0; j < TN; ++j) gl::store_c_old(g, m0 + rows.at(i), n0 + cols.at(j), acc[i][j], old[j]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) gemm_stage_rows(const __grid_constant__ StagedRows s) {
  follow_previous_grid();
  hopper::stage_rows(s.operand[blockIdx.z]);
}
