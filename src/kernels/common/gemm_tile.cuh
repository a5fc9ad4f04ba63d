// Building blocks of the tiled SGEMM families, compiled by NVRTC with the family's source.
//
// Every family sees the canonical problem: C row-major (the host swaps A and B for column-major
// problems), op(A)(i, k) = a[i*a_row + k*a_col], op(B)(k, j) = b[k*b_row + j*b_col]. Which
// dimension of each operand is contiguous, and whether 16-byte vectors are aligned, are
// compile-time facts of the variant (A_K_CONTIG, B_N_CONTIG, A_VEC, B_VEC, C_VEC), chosen per
// call by the host.
#pragma once
#include "accumulate.cuh"
#include "gemm_args.h"
#include "grid_dependency.cuh"
#include "split_tail.cuh"

#ifndef A_K_CONTIG
#define A_K_CONTIG 1
#endif
#ifndef B_N_CONTIG
#define B_N_CONTIG 1
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#ifndef C_VEC
#define C_VEC 0
#endif

// Ablations (gemmlab explain --ablate; the Ablation enum): 1 leaves the C store out, 2 loads only
// the first K tile(s) from global memory and reuses them, 3 stores only the first K tile to shared
// memory. The kernel then does not compute the product.
#ifndef ABLATE
#define ABLATE 0
#endif
#define ABLATE_NO_STORE (ABLATE == 1)
#define ABLATE_NO_LOAD (ABLATE == 2)
#define ABLATE_NO_SMEM_STORE (ABLATE == 3)

namespace gl {

// Whether the K tile starting at k0 is loaded from global memory (every tile, unless ablated).
__device__ inline bool loads_tile(long long k0) { return !ABLATE_NO_LOAD || k0 == 0; }
// Whether it is stored to shared memory.
__device__ inline bool stores_tile(long long k0) { return !ABLATE_NO_SMEM_STORE || k0 == 0; }

// An operand seen as outer × K: A is M × K, B is N × K (its transpose), so one loader serves both.
// CONTIG_K: consecutive k are adjacent in memory; otherwise consecutive outer indices are.
struct Operand {
  const float* p;
  long long s_outer, s_k;  // element strides
  long long outer, k;      // extents
  __device__ bool in(long long o, long long kk) const { return o < outer && kk < k; }
  __device__ const float* at(long long o, long long kk) const { return p + o * s_outer + kk * s_k; }
  __device__ float get(long long o, long long kk) const { return in(o, kk) ? *at(o, kk) : 0.0f; }
};

__device__ inline Operand operand_a(const GemmArgs& g) { return {g.a, g.a_row, g.a_col, g.m, g.k}; }
__device__ inline Operand operand_b(const GemmArgs& g) { return {g.b, g.b_col, g.b_row, g.n, g.k}; }

// Epilogue for one element: beta = 0 never reads C (it may hold NaN).
__device__ inline void store_c(const GemmArgs& g, long long i, long long j, float acc) {
  if (i >= g.m || j >= g.n) return;
  float* c = g.c + i * g.c_row + j * g.c_col;  // c_col: 1, or ldc for a transposed product's C
  if (ABLATE_NO_STORE) {  // a test that never holds keeps the accumulation alive
    if (__float_as_uint(acc) == 0x7fc00001u) *c = acc;
    return;
  }
  *c = g.beta == 0.0f ? g.alpha * acc : g.alpha * acc + g.beta * *c;
}

// The same in two steps, for a caller that reads a run of old values before writing any (a store
// may alias a later load, so each load would wait for the store before it): old_c is C's old
// value at (i, j) where beta != 0 and the element exists, else 0; store_c_old writes the element.
__device__ inline float old_c(const GemmArgs& g, long long i, long long j) {
  return g.beta != 0.0f && i < g.m && j < g.n && !ABLATE_NO_STORE ? g.c[i * g.c_row + j * g.c_col] : 0.0f;
}
__device__ inline void store_c_old(const GemmArgs& g, long long i, long long j, float acc, float old) {
  if (i >= g.m || j >= g.n) return;
  if (ABLATE_NO_STORE) return store_c(g, i, j, acc);
  g.c[i * g.c_row + j * g.c_col] = g.beta == 0.0f ? g.alpha * acc : g.alpha * acc + g.beta * old;
}

// C(i, j) summed as cuBLAS SGEMM sums it: FP32 fused multiply-adds over k, from the caller's
// operands. NaN absorbs every later term, so the loop ends there.
__device__ inline float fp32_dot(const GemmArgs& g, long long i, long long j) {
  float acc = 0.0f;
  for (long long k = 0; k < g.k && acc == acc; ++k)
    acc = fmaf(g.a[i * g.a_row + k * g.a_col], g.b[k * g.b_row + j * g.b_col], acc);
  return acc;
}

// The epilogue of a split product (3xTF32): an infinite input splits into Inf and a remainder of
// Inf − Inf = NaN, and its products with the other operand's parts can add +Inf to −Inf where the
// plain product is Inf. Only a sum that is not finite can differ from FP32's in kind: that element
// is summed again in FP32 (never on finite data: one compare per element), so Inf, −Inf and NaN
// come out where, and as, cuBLAS SGEMM gives them. PRODUCTS: 3 for 3xTF32, 1 (a plain store) for
// one product, whose non-finite results already are FP32's.
template <int PRODUCTS>
__device__ inline void store_c_split(const GemmArgs& g, long long i, long long j, float acc) {
  if (i >= g.m || j >= g.n) return;
  store_c(g, i, j, PRODUCTS != 3 || isfinite(acc) ? acc : fp32_dot(g, i, j));
}
// The same with C's old value read before (old_c), for an epilogue that reads several before it
// writes any.
template <int PRODUCTS>
__device__ inline void store_c_split_old(const GemmArgs& g, long long i, long long j, float acc, float old) {
  if (i >= g.m || j >= g.n) return;
  store_c_old(g, i, j, PRODUCTS != 3 || isfinite(acc) ? acc : fp32_dot(g, i, j), old);
}

// W (2 or 4) consecutive columns of one row, j a multiple of W: one 8- or 16-byte access when
// aligned (vec: rows 16-byte aligned) and inside C, or inside its row's padding (padded: split-K's
// partial sums, rows partial_pitch(N) apart).
template <int W>
struct FloatRun;
template <>
struct FloatRun<2> {
  using type = float2;
};
template <>
struct FloatRun<4> {
  using type = float4;
};
template <int W>
__device__ inline void store_c_run(const GemmArgs& g, long long i, long long j, const float* v, bool vec = C_VEC,
                                   bool padded = false) {
  using Vec = typename FloatRun<W>::type;
  if (i >= g.m) return;
  float* row = g.c + i * g.c_row;
  if (vec && (padded ? j < g.n : j + W - 1 < g.n) && !ABLATE_NO_STORE) {
    Vec* c = reinterpret_cast<Vec*>(row + j);
    Vec old{}, r;
    if (g.beta != 0.0f) old = *c;
    const float* o = reinterpret_cast<const float*>(&old);
    float* out = reinterpret_cast<float*>(&r);
#pragma unroll
    for (int t = 0; t < W; ++t) out[t] = g.beta == 0.0f ? g.alpha * v[t] : g.alpha * v[t] + g.beta * o[t];
    *c = r;
    return;
  }
  if (ABLATE_NO_STORE) {
    for (int t = 0; t < W; ++t) store_c(g, i, j + t, v[t]);
    return;
  }
  // A float at a time: the row's address once, then one bound per column.
  for (int t = 0; t < W && j + t < g.n; ++t) {
    float* c = row + (j + t) * g.c_col;
    *c = g.beta == 0.0f ? g.alpha * v[t] : g.alpha * v[t] + g.beta * *c;
  }
}
// The same in two steps, for an epilogue that reads every run it owns before it writes any (a store
// may alias a later load, so each load would wait for the store before it): C's old values of a
// run, zero where beta == 0 or outside C, then the run written. The tiled epilogues keep
// store_c_run: built from these two, their code grew by 2-15 % (hopper-simt, warptiled and dmma
// cubins at 695272f; perf-log 89).
template <int W>
struct OldRun {
  float v[W] = {};
};
template <int W>
__device__ inline OldRun<W> old_c_run(const GemmArgs& g, long long i, long long j, bool vec) {
  OldRun<W> o;
  if (g.beta == 0.0f || i >= g.m || ABLATE_NO_STORE) return o;
  const float* row = g.c + i * g.c_row;
  if (vec && j + W - 1 < g.n) {
    const auto x = *reinterpret_cast<const typename FloatRun<W>::type*>(row + j);
    const float* f = reinterpret_cast<const float*>(&x);
#pragma unroll
    for (int t = 0; t < W; ++t) o.v[t] = f[t];
  } else {
    for (int t = 0; t < W && j + t < g.n; ++t) o.v[t] = row[(j + t) * g.c_col];
  }
  return o;
}
template <int W>
__device__ inline void store_c_run_old(const GemmArgs& g, long long i, long long j, const float* v,
                                       const OldRun<W>& old, bool vec) {
  using Vec = typename FloatRun<W>::type;
  if (i >= g.m) return;
  if (ABLATE_NO_STORE) {
    for (int t = 0; t < W; ++t) store_c(g, i, j + t, v[t]);
    return;
  }
  Vec r;
  float* out = reinterpret_cast<float*>(&r);
#pragma unroll
  for (int t = 0; t < W; ++t) out[t] = g.beta == 0.0f ? g.alpha * v[t] : g.alpha * v[t] + g.beta * old.v[t];
  float* row = g.c + i * g.c_row;
  if (vec && j + W - 1 < g.n) {
    *reinterpret_cast<Vec*>(row + j) = r;
    return;
  }
  // A float at a time: the row's address once, then one bound per column.
  for (int t = 0; t < W && j + t < g.n; ++t) row[(j + t) * g.c_col] = out[t];
}
__device__ inline void store_c4(const GemmArgs& g, long long i, long long j, const float* v, bool vec = C_VEC,
                                bool padded = false) {
  store_c_run<4>(g, i, j, v, vec, padded);
}

// Shared-memory tile of an operand, stored k-major: S[k][o], rows of OUTER + PAD floats.
// SWIZZLE moves 16-byte chunks within a row (chunk ^= k % 8) instead of padding: both break the
// bank conflicts of the transposing stores while keeping 16-byte reads along o aligned.
template <int OUTER, int K, int PAD, bool SWIZZLE>
struct KTile {
  static constexpr bool kAlongK = false;  // consecutive k are a row apart
  static constexpr int kRow = OUTER + PAD;
  static constexpr int kFloats = K * kRow;
  __device__ static int index(int k, int o) {
    if (SWIZZLE) return k * kRow + ((((o >> 2) ^ (k & 7)) << 2) | (o & 3));
    return k * kRow + o;
  }
  __device__ static float4 read4(const float* s, int k, int o) {  // o a multiple of 4
    return *reinterpret_cast<const float4*>(s + index(k, o));
  }
};

// Shared-memory tile of an operand stored outer-major: S[o][k], rows of K + PAD floats, so that a
// K-contiguous operand's rows land as they lie in memory (16-byte copies along k).
template <int OUTER, int K, int PAD>
struct OTile {
  static constexpr bool kAlongK = true;
  static constexpr int kRow = K + PAD;
  static constexpr int kFloats = OUTER * kRow;
  __device__ static int index(int k, int o) { return o * kRow + k; }
};

// The tile of a family compiled with CONFLICT: 0 none, 1 rows padded by one 16-byte chunk,
// 2 chunks swizzled.
template <int OUTER, int K, int CONFLICT_MODE>
using KTileFor = KTile<OUTER, K, CONFLICT_MODE == 1 ? 4 : 0, CONFLICT_MODE == 2>;

// ---- global → registers → shared (the synchronous path) ----
//
// The tile is cut into chunks of 4 elements along the operand's contiguous dimension; thread t
// owns chunks t, t + NT, ... Each chunk is one 16-byte load when VEC and fully inside, else
// four guarded scalar loads (zero outside the matrix).
template <int OUTER, int K, int NT, bool CONTIG_K, bool VEC>
struct ChunkLoader {
  static constexpr int kChunks = OUTER * K / 4;
  static constexpr int kPerThread = kChunks / NT;
  static_assert(kChunks % NT == 0, "tile chunks must divide evenly among the threads");

  // Chunk c covers (o, k0..k0+3) when CONTIG_K, else (o0..o0+3, k).
  __device__ static void coords(int c, int& o, int& k) {
    if (CONTIG_K) {
      o = c / (K / 4);
      k = (c % (K / 4)) * 4;
    } else {
      k = c / (OUTER / 4);
      o = (c % (OUTER / 4)) * 4;
    }
  }

  __device__ static void load(const Operand& x, long long o0, long long k0, float4 (&r)[kPerThread]) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int o, k;
      coords(threadIdx.x + i * NT, o, k);
      long long go = o0 + o, gk = k0 + k;
      bool full = CONTIG_K ? (go < x.outer && gk + 3 < x.k) : (gk < x.k && go + 3 < x.outer);
      if (VEC && full) {
        r[i] = *reinterpret_cast<const float4*>(x.at(go, gk));
      } else if (CONTIG_K) {
        r[i] = make_float4(x.get(go, gk), x.get(go, gk + 1), x.get(go, gk + 2), x.get(go, gk + 3));
      } else {
        r[i] = make_float4(x.get(go, gk), x.get(go + 1, gk), x.get(go + 2, gk), x.get(go + 3, gk));
      }
    }
  }

  template <class Tile>
  __device__ static void store(float* s, const float4 (&r)[kPerThread]) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int o, k;
      coords(threadIdx.x + i * NT, o, k);
      if (CONTIG_K) {  // transposing store: four rows of the k-major tile
        s[Tile::index(k, o)] = r[i].x;
        s[Tile::index(k + 1, o)] = r[i].y;
        s[Tile::index(k + 2, o)] = r[i].z;
        s[Tile::index(k + 3, o)] = r[i].w;
      } else {
        *reinterpret_cast<float4*>(s + Tile::index(k, o)) = r[i];
      }
    }
  }
};

// The loaders of op(A) and op(B)ᵀ for the variant being compiled.
template <int OUTER, int K, int NT>
using LoaderA = ChunkLoader<OUTER, K, NT, A_K_CONTIG, A_VEC>;
template <int OUTER, int K, int NT>
using LoaderB = ChunkLoader<OUTER, K, NT, !B_N_CONTIG, B_VEC>;

// ---- global → shared without registers (cp.async, sm_80+) ----
//
// Inline PTX rather than cuda::memcpy_async: the src-size operand zero-fills the part of a copy
// that lies outside the matrix, which is how edge tiles get their zero padding for free.
__device__ inline void cp_async4(float* dst, const float* src, bool valid) {
  unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 4 : 0));
}
// A chunk partly inside (0 < valid_floats < 4) goes a float at a time: the 16-byte copy with a
// shorter src-size is a 16-byte read to compute-sanitizer, past the end of an operand whose last
// row is stored tight (B of 33 x 55 with ldb = 56: 1847 floats; perf-log 97).
__device__ inline void cp_async16(float* dst, const float* src, int valid_floats) {
  if (valid_floats > 0 && valid_floats < 4) {
#pragma unroll
    for (int e = 0; e < 4; ++e) cp_async4(dst + e, e < valid_floats ? src + e : src, e < valid_floats);
    return;
  }
  unsigned d = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid_floats * 4));
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The floats inside the matrix of the 16-byte chunk at (o, k) along the contiguous dimension: none
// when its line lies outside, else up to the line's end.
template <bool CONTIG_K>
__device__ inline int chunk_floats(const Operand& x, long long o, long long k) {
  const long long left = CONTIG_K ? x.k - k : x.outer - o;
  const bool line_inside = CONTIG_K ? o < x.outer : k < x.k;
  return line_inside ? int(left >= 4 ? 4 : (left > 0 ? left : 0)) : 0;
}

// Copies one OUTER × K tile into the shared tile (k-major KTile or outer-major OTile). 16-byte
// copies when vectors are aligned and the tile keeps the operand's contiguous dimension contiguous;
// otherwise 4-byte copies that scatter into the transposed layout (still asynchronous, still
// coalesced on the global side).
template <int OUTER, int K, int NT, bool CONTIG_K, bool VEC, class Tile>
__device__ inline void cp_async_tile(float* s, const Operand& x, long long o0, long long k0) {
  if constexpr (VEC && CONTIG_K == Tile::kAlongK) {  // 16-byte chunks along the contiguous dimension
    constexpr int kLineChunks = (CONTIG_K ? K : OUTER) / 4;
    constexpr int kChunks = OUTER * K / 4;
    static_assert(kChunks % NT == 0, "tile chunks must divide evenly among the threads");
#pragma unroll
    for (int i = 0; i < kChunks / NT; ++i) {
      int c = threadIdx.x + i * NT;
      int line = c / kLineChunks, along = (c % kLineChunks) * 4;
      int o = CONTIG_K ? line : along, k = CONTIG_K ? along : line;
      long long go = o0 + o, gk = k0 + k;
      int valid = chunk_floats<CONTIG_K>(x, go, gk);
      cp_async16(s + Tile::index(k, o), valid ? x.at(go, gk) : x.p, valid);
    }
  } else {
    constexpr int kElems = OUTER * K;
    static_assert(kElems % NT == 0, "tile elements must divide evenly among the threads");
#pragma unroll
    for (int i = 0; i < kElems / NT; ++i) {
      int e = threadIdx.x + i * NT;
      // Consecutive threads take consecutive addresses of the contiguous dimension.
      int o = CONTIG_K ? e / K : e % OUTER;
      int k = CONTIG_K ? e % K : e / OUTER;
      bool valid = x.in(o0 + o, k0 + k);
      cp_async4(s + Tile::index(k, o), valid ? x.at(o0 + o, k0 + k) : x.p, valid);
    }
  }
}

// The same copies with their addressing hoisted out of the main loop. Each thread's copies of a
// tile lie a constant (DO, DK) apart when one pass of the block covers whole lines of the
// contiguous dimension, so a tile costs one pointer increment and a constant stride per copy,
// and tiles wholly inside the matrix (all but the edges) skip the bounds checks. Profiled on the
// H100, the per-element address arithmetic of cp_async_tile was a third of warptiled's
// instructions (docs/perf-log.md, entry 3). Irregular shapes fall back to cp_async_tile.
template <int OUTER, int K, int NT, bool CONTIG_K, bool VEC, class Tile>
struct TileCopier {
  // 16-byte copies along the contiguous dimension, where the tile keeps it contiguous too.
  static constexpr bool kChunk = VEC && CONTIG_K == Tile::kAlongK;
  static constexpr int kW = kChunk ? 4 : 1;            // floats per copy
  static constexpr int kPass = NT * kW;                // floats one pass of the block copies
  static constexpr int kLine = CONTIG_K ? K : OUTER;   // floats per line of the contiguous dimension
  static constexpr bool kRegular = kPass % kLine == 0 && (OUTER * K) % kPass == 0;
  static constexpr int kCopies = (OUTER * K) / kPass;
  static constexpr int DO = CONTIG_K ? kPass / K : 0;  // (o, k) step between a thread's copies
  static constexpr int DK = CONTIG_K ? 0 : kPass / OUTER;

  Operand x;
  long long o0;
  int o_t, k_t;             // this thread's first copy, relative to the tile
  const float* src;         // its source in tile 0
  long long copy_step, tile_step;
  bool outer_inside;        // the block's rows (columns) all lie inside the matrix

  __device__ TileCopier(const Operand& x_, long long o0_) : x(x_), o0(o0_) {
    int e = threadIdx.x * kW;
    o_t = CONTIG_K ? e / K : e % OUTER;
    k_t = CONTIG_K ? e % K : e / OUTER;
    src = x.p + (o0 + o_t) * x.s_outer + (long long)k_t * x.s_k;
    copy_step = DO * x.s_outer + DK * x.s_k;
    tile_step = K * x.s_k;
    outer_inside = o0 + OUTER <= x.outer;
  }

  __device__ void issue(float* s, int tile) const {
    if (!kRegular) {
      cp_async_tile<OUTER, K, NT, CONTIG_K, VEC, Tile>(s, x, o0, (long long)tile * K);
      return;
    }
    const long long k0 = (long long)tile * K;
    const float* p = src + tile * tile_step;
    if (outer_inside && k0 + K <= x.k) {
#pragma unroll
      for (int i = 0; i < kCopies; ++i) {
        float* d = s + Tile::index(k_t + i * DK, o_t + i * DO);
        if (kChunk)
          cp_async16(d, p + i * copy_step, 4);
        else
          cp_async4(d, p + i * copy_step, true);
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const long long o = o0 + o_t + i * DO, k = k0 + k_t + i * DK;
      float* d = s + Tile::index(k_t + i * DK, o_t + i * DO);
      if (kChunk) {
        int valid = chunk_floats<CONTIG_K>(x, o, k);
        cp_async16(d, valid ? p + i * copy_step : x.p, valid);
      } else {
        bool valid = x.in(o, k);
        cp_async4(d, valid ? p + i * copy_step : x.p, valid);
      }
    }
  }
};

// ---- the thread tile: FM × FN outputs as (FM/4) × (FN/4) sub-tiles of 4 × 4 ----
//
// FM × FN outputs; sub-tile (i, j) covers rows row0 + i*ROW_STEP + 0..3 and columns col0 + j*COL_STEP + 0..3 of the
// block tile, so each k needs FM/4 + FN/4 16-byte shared loads for FM·FN FMAs. Acc: the accumulators'
// type (accumulate.cuh). TILE_SUMS: mma() sums its K tile in FP32 (FFMA speed) and adds that sum to
// the accumulators once (Acc double: accum=fp64tile), so FP32 rounds BK products, not all of K.
template <int FM, int FN, int ROW_STEP, int COL_STEP, class Acc = float, bool TILE_SUMS = false>
struct ThreadTile {
  Acc acc[FM][FN];

  __device__ void zero() {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) acc[i][j] = Acc(0);
  }

  // One k step's fragments: FM values of A and FN of B, in 16-byte shared loads.
  struct Frag {
    float a[FM], b[FN];
  };
  template <class TileA, class TileB>
  __device__ static void load(Frag& f, const float* As, const float* Bs, int k, int row0, int col0) {
#pragma unroll
    for (int i = 0; i < FM / 4; ++i) {
      float4 v = TileA::read4(As, k, row0 + i * ROW_STEP);
      f.a[4 * i] = v.x, f.a[4 * i + 1] = v.y, f.a[4 * i + 2] = v.z, f.a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < FN / 4; ++j) {
      float4 v = TileB::read4(Bs, k, col0 + j * COL_STEP);
      f.b[4 * j] = v.x, f.b[4 * j + 1] = v.y, f.b[4 * j + 2] = v.z, f.b[4 * j + 3] = v.w;
    }
  }
  __device__ void fma(const Frag& f) {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN; ++j) acc[i][j] = mac(f.a[i], f.b[j], acc[i][j]);
  }

  template <int KSTEPS, class TileA, class TileB>
  __device__ void mma(const float* As, const float* Bs, int row0, int col0) {
    if constexpr (TILE_SUMS) {
      ThreadTile<FM, FN, ROW_STEP, COL_STEP> sums;
      sums.zero();
      sums.template mma<KSTEPS, TileA, TileB>(As, Bs, row0, col0);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) acc[i][j] += Acc(sums.acc[i][j]);
      return;
    }
#pragma unroll
    for (int k = 0; k < KSTEPS; ++k) {
      float a[FM], b[FN];
#pragma unroll
      for (int i = 0; i < FM / 4; ++i) {
        float4 v = TileA::read4(As, k, row0 + i * ROW_STEP);
        a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < FN / 4; ++j) {
        float4 v = TileB::read4(Bs, k, col0 + j * COL_STEP);
        b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) acc[i][j] = mac(a[i], b[j], acc[i][j]);
    }
  }

  // (m0, n0): the block tile's origin in C. vec: 16-byte stores allowed. plane: which float of an FP64
  // split partial sum (partial_plane; 0, the sum rounded, for C itself).
  __device__ void store(const GemmArgs& g, long long m0, long long n0, int row0, int col0, bool vec = C_VEC,
                        int plane = 0, bool padded = false) const {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
      for (int j = 0; j < FN / 4; ++j) {
        const float v[4] = {partial_plane(acc[i][4 * j], plane), partial_plane(acc[i][4 * j + 1], plane),
                            partial_plane(acc[i][4 * j + 2], plane), partial_plane(acc[i][4 * j + 3], plane)};
        store_c4(g, m0 + row0 + (i / 4) * ROW_STEP + i % 4, n0 + col0 + j * COL_STEP, v, vec, padded);
      }
  }

  // C without 16-byte stores (rows not 16-byte aligned), the lanes laid out as warptiled lays them
  // (lane / kLanesN along M, lane % kLanesN along N, 4 x 4 sub-tiles ROW_STEP and COL_STEP apart):
  // a float at a time, one store of the warp writes 8 rows x 4 lanes' floats 16 bytes apart, 16
  // sectors for 128 bytes, and the store queue sets the time (1000x777x13: 12.4 us, 6.6 with ldc
  // = 780; perf-log 97). Instead, for each of its FM rows a lane puts its FN values in `stage` (the
  // warp's kLanesM rows x kWarpN columns, kStageFloats), then the warp stores those rows with its
  // lanes on consecutive columns: one run of 32 floats per store.
  static constexpr bool kStagesEveryC = false;  // only a C without 16-byte stores (store_result)
  static constexpr int kLanesM = ROW_STEP / 4, kLanesN = COL_STEP / 4, kWarpN = FN / 4 * COL_STEP;
  static constexpr int kStagePitch = kWarpN + 4, kStageFloats = kLanesM * kStagePitch;
  __device__ void store_staged(const GemmArgs& g, long long m0, long long n0, int row0, int col0, float* stage) const {
    static_assert(kLanesM * kLanesN == 32, "store_staged needs a warp's 32 lanes over its patch");
    const int lane = threadIdx.x % 32;
    const int warp_row = row0 - (lane / kLanesN) * 4, warp_col = col0 - (lane % kLanesN) * 4;
    float* mine = stage + (lane / kLanesN) * kStagePitch + (lane % kLanesN) * 4;
#pragma unroll
    for (int i = 0; i < FM; ++i) {
#pragma unroll
      for (int j = 0; j < FN / 4; ++j)
        *reinterpret_cast<float4*>(mine + j * COL_STEP) =
            make_float4(partial_plane(acc[i][4 * j], 0), partial_plane(acc[i][4 * j + 1], 0),
                        partial_plane(acc[i][4 * j + 2], 0), partial_plane(acc[i][4 * j + 3], 0));
      __syncwarp();
      // Staged row r is the block tile's row first + 4r.
      const long long first = m0 + warp_row + (i / 4) * ROW_STEP + i % 4;
#pragma unroll 1
      for (int e = lane; e < kLanesM * kWarpN; e += 32) {
        const int r = e / kWarpN, c = e % kWarpN;
        store_c(g, first + 4 * r, n0 + warp_col + c, stage[r * kStagePitch + c]);
      }
      __syncwarp();  // read before the next row overwrites it
    }
  }
};

// ---- the multi-stage cp.async main loop ----
//
// NSTAGES shared-memory slots form a ring: tiles t+1 .. t+NSTAGES-1 are in flight while tile t is
// computed, so global latency hides behind NSTAGES-1 tiles of FMAs.
// DOUBLE_FRAG: the fragments of step k+1 are loaded from shared memory while step k's FMAs run
// (two fragment buffers), also across the tile boundary: the barrier that publishes tile t+1
// sits before the last step of tile t, so the first fragments of t+1 are in registers before
// t's last FMAs. That barrier also tells every thread that the slot of tile t-1, refilled at the
// start of tile t+1, is no longer read. Without it, one barrier opens each tile and the
// compiler schedules the fully unrolled step's loads itself (fewer registers).
template <int TILE_M, int TILE_N, int TILE_K, int NT, int NSTAGES, bool DOUBLE_FRAG, class TileA, class TileB,
          class Tile>
__device__ inline void cp_async_mainloop(const GemmArgs& g, float* smem, long long m0, long long n0, Tile& t,
                                         int row0, int col0, int first_tile, int tiles) {
  static_assert(NSTAGES >= 2, "a pipeline needs two stages at least");
  const Operand A = operand_a(g), B = operand_b(g);
  constexpr int kStage = TileA::kFloats + TileB::kFloats;
  // Tiles are counted from first_tile (split-K gives each split its own range of K).
  // int: K < 2^31, and a 64-bit modulo in slot() would cost a dozen instructions per call.
  auto slot = [&](int tile) { return smem + (tile % NSTAGES) * kStage; };
  const TileCopier<TILE_M, TILE_K, NT, A_K_CONTIG, A_VEC, TileA> copy_a(A, m0);
  const TileCopier<TILE_N, TILE_K, NT, !B_N_CONTIG, B_VEC, TileB> copy_b(B, n0);
  auto issue = [&](int tile) {
    if (tile < tiles && (!ABLATE_NO_LOAD || tile < NSTAGES - 1)) {
      copy_a.issue(slot(tile), first_tile + tile);
      copy_b.issue(slot(tile) + TileA::kFloats, first_tile + tile);
    }
    cp_async_commit();  // empty groups keep the count uniform for wait_group
  };
#pragma unroll
  for (int s = 0; s < NSTAGES - 1; ++s) issue(s);
  // Resolved at compile time: a Tile without fragments (dmma's warp tile) has only mma().
  if constexpr (!DOUBLE_FRAG) {
    for (int tile = 0; tile < tiles; ++tile) {
      cp_async_wait<NSTAGES - 2>();
      __syncthreads();  // tile is visible; the slot refilled next (tile - 1's) is free
      issue(tile + NSTAGES - 1);
      const float* s = slot(tile);
      t.template mma<TILE_K, TileA, TileB>(s, s + TileA::kFloats, row0, col0);
    }
  } else {
    cp_async_wait<NSTAGES - 2>();
    __syncthreads();

    typename Tile::Frag frag[2];
    Tile::template load<TileA, TileB>(frag[0], slot(0), slot(0) + TileA::kFloats, 0, row0, col0);
    for (int tile = 0; tile < tiles; ++tile) {
      issue(tile + NSTAGES - 1);
      const float* s = slot(tile);
#pragma unroll
      for (int k = 0; k < TILE_K; ++k) {
        if (k == TILE_K - 1) {
          cp_async_wait<NSTAGES - 2>();
          __syncthreads();
        }
        if (k + 1 < TILE_K) {
          Tile::template load<TileA, TileB>(frag[(k + 1) & 1], s, s + TileA::kFloats, k + 1, row0, col0);
        } else if (tile + 1 < tiles) {
          const float* n = slot(tile + 1);
          Tile::template load<TileA, TileB>(frag[(k + 1) & 1], n, n + TileA::kFloats, 0, row0, col0);
        }
        t.fma(frag[k & 1]);
      }
    }
  }
}

// With split-K, slice z's raw partial sums go to its part of the workspace (`planes` row-major
// M × N matrices, kPartialPlanes of the accumulators; alpha = 1, beta = 0); one store path for both
// keeps the register count down. plane: the next plane's matrix. Their rows are partial_pitch(N)
// floats apart, so every group of four columns is one aligned 16-byte store whatever N is (an odd
// N sent each partial sum out a float at a time: a third of the kernel at 511³, perf-log 50).
__device__ inline long long partial_pitch(long long n) { return (n + 3) / 4 * 4; }
__device__ inline GemmArgs splitk_output(const GemmArgs& g, int z, int splits, int planes = 1, int plane = 0) {
  GemmArgs out = g;
  if (splits > 1) {
    const long long pitch = partial_pitch(g.n);
    out.c = g.workspace + ((long long)z * planes + plane) * g.m * pitch;
    out.c_row = pitch, out.c_col = 1, out.alpha = 1.0f, out.beta = 0.0f;  // [split][m][pitch], whatever C's layout
  }
  return out;
}

// The second step of split-K: C = alpha · Σ_z partial_z + beta · C, one thread per element (the
// families' reduce kernels are 256-thread wrappers of this), summed in the accumulators' type.
template <class Acc = float>
__device__ inline void splitk_reduce(const GemmArgs& g, int splits) {
  const long long mn = g.m * g.n, pitch = partial_pitch(g.n), plane = g.m * pitch;
  for (long long e = blockIdx.x * 256ll + threadIdx.x; e < mn; e += 256ll * gridDim.x) {
    const long long i = e / g.n, j = e % g.n;
    const float* p = g.workspace + i * pitch + j;
    Acc sum = 0;
    // Unrolled, eight slices' loads are in flight before their adds (which keep split order): a
    // huge K split hundreds of ways would otherwise wait on one load at a time.
#pragma unroll 8
    for (int z = 0; z < splits; ++z) sum += partial_at<Acc>(p + z * kPartialPlanes<Acc> * plane, plane);
    store_c(g, i, j, float(sum));
  }
}

// Tiles of TILE_K along K.
__device__ inline int k_tiles(const GemmArgs& g, int tile_k) { return int((g.k + tile_k - 1) / tile_k); }

// Grouped block order: GROUP_ROWS consecutive block rows sweep the block columns together, so that
// neighbouring blocks share A and B tiles in L2. (bm, bn): this block's tile of the 2-D grid.
template <int GROUP_ROWS>
__device__ inline void grouped_tile(int& bm, int& bn) {
  const int tiles_m = gridDim.y, tiles_n = gridDim.x;
  const int id = blockIdx.y * tiles_n + blockIdx.x;
  const int group_size = GROUP_ROWS * tiles_n;
  const int first_m = (id / group_size) * GROUP_ROWS;
  const int rows_here = min(tiles_m - first_m, GROUP_ROWS);
  bm = first_m + (id % group_size) % rows_here, bn = (id % group_size) / rows_here;
}

// Split-K: split blockIdx.z of gridDim.z takes an equal run of the K tiles, [first, first + count).
__device__ inline void split_run(const GemmArgs& g, int tile_k, int& first, int& count) {
  const int tiles = k_tiles(g, tile_k), per_split = (tiles + gridDim.z - 1) / gridDim.z;
  first = blockIdx.z * per_split, count = max(0, min(tiles, first + per_split) - first);
}

// A block tile's result from its accumulators (type Acc): C, in the Tile's vector stores where C
// allows, or with split-K the split's partial sums, every plane, in the workspace's padded rows.
// STAGE_C: C without 16-byte stores goes through the warp's `stage` (Tile::store_staged), and every
// C tile where the Tile says kStagesEveryC (split-K's partial sums, in padded rows, stay direct).
template <class Acc, bool STAGE_C = false, class Tile>
__device__ inline void store_result(const GemmArgs& g, const Tile& t, long long m0, long long n0, int row0, int col0,
                                    float* stage = nullptr) {
  constexpr int planes = kPartialPlanes<Acc>;
  const bool split = gridDim.z > 1, vec = split || C_VEC;
  if constexpr (STAGE_C) {
    if (!vec || (Tile::kStagesEveryC && !split)) return t.store_staged(g, m0, n0, row0, col0, stage);
  }
  t.store(splitk_output(g, blockIdx.z, gridDim.z, planes), m0, n0, row0, col0, vec, 0, split);
  if (planes == 2 && split) t.store(splitk_output(g, blockIdx.z, gridDim.z, planes, 1), m0, n0, row0, col0, vec, 1, split);
}

// ---- the persistent tile loop ----
//
// A block that loads, sums and stores one tile, then exits, stores C only at its end: at short K
// that store is nearly the whole call, and the SM's few resident blocks leave it bursty (the dmma
// and warptiled tiles stored C at 1.6-2.1 TB/s at K = 16, perf-log 95). Here each block walks the
// tiles blockIdx.x, + gridDim.x, ... (tail::banded_tile's order) and the cp.async ring runs over the whole
// sequence of (tile, K tile) steps, so the next tiles' operands are in flight while a tile's sums
// are stored.

// The loop: `store(m0, n0)` writes the tile at (m0, n0) from `t`, which is zeroed after it. Split-K:
// gridDim.z slices, each the same walk over its run of K tiles (split_run).
template <int TILE_M, int TILE_N, int TILE_K, int NT, int NSTAGES, int GROUP_ROWS, class TileA, class TileB, class Tile,
          class Store>
__device__ inline void cp_async_tile_loop(const GemmArgs& g, float* smem, Tile& t, int row0, int col0, Store store) {
  static_assert(NSTAGES >= 2, "a pipeline needs two stages at least");
  const Operand A = operand_a(g), B = operand_b(g);
  constexpr int kStage = TileA::kFloats + TileB::kFloats;
  int first, count;
  split_run(g, TILE_K, first, count);
  const int per = max(count, 1);  // a slice past K's end still writes its (zero) partial sums
  const long long tiles_m = (g.m + TILE_M - 1) / TILE_M, tiles_n = (g.n + TILE_N - 1) / TILE_N;
  const long long tiles = tiles_m * tiles_n;
  const long long steps = blockIdx.x < tiles ? ((tiles - 1 - blockIdx.x) / gridDim.x + 1) * per : 0;
  // The producer's and the consumer's positions: ring slot, tile, K tile in it.
  struct Cursor {
    tail::BandedWalk<GROUP_ROWS> walk;
    int slot = 0, k = 0;
    __device__ bool next(int per) {  // true where a tile ends
      slot = slot + 1 == NSTAGES ? 0 : slot + 1;
      if (++k < per) return false;
      k = 0, walk.next();
      return true;
    }
  };
  Cursor fill{{unsigned(tiles_m), unsigned(tiles_n), blockIdx.x, gridDim.x}}, use = fill;
  long long issued = 0;
  auto issue = [&]() {
    if (issued < steps && count > 0 && (!ABLATE_NO_LOAD || issued < NSTAGES - 1)) {
      long long tm, tn;
      fill.walk.origin(tm, tn);
      float* s = smem + fill.slot * kStage;
      TileCopier<TILE_M, TILE_K, NT, A_K_CONTIG, A_VEC, TileA>(A, tm * TILE_M).issue(s, first + fill.k);
      TileCopier<TILE_N, TILE_K, NT, !B_N_CONTIG, B_VEC, TileB>(B, tn * TILE_N)
          .issue(s + TileA::kFloats, first + fill.k);
    }
    cp_async_commit();  // empty groups keep the count uniform for wait_group
    fill.next(per);
    ++issued;
  };
#pragma unroll
  for (int s = 0; s < NSTAGES - 1; ++s) issue();
  for (long long step = 0; step < steps; ++step) {
    cp_async_wait<NSTAGES - 2>();
    __syncthreads();  // this step's tile is visible; the slot refilled next (the last step's) is free
    issue();
    if (count > 0) {
      const float* s = smem + use.slot * kStage;
      t.template mma<TILE_K, TileA, TileB>(s, s + TileA::kFloats, row0, col0);
    }
    long long tm, tn;
    use.walk.origin(tm, tn);
    if (use.next(per)) {
      store(tm * TILE_M, tn * TILE_N);
      t.zero();
    }
  }
}

// A cp.async family's block: one tile (grouped order, split_run's K tiles) or, persistent (WALK),
// its walk over the tiles; each tile's sums stored from accumulators of type Acc. STAGE_C: C without
// 16-byte stores goes out through shared memory, each warp's Tile::kStageFloats: the operand ring's
// once the last K tile is summed, or (WALK: the ring holds the next tiles) the same beyond it
// (warptiled's smem() on the host).
template <int TILE_M, int TILE_N, int TILE_K, int NT, int NSTAGES, int GROUP_ROWS, bool DOUBLE_FRAG, bool WALK,
          bool STAGE_C, class Acc, class TileA, class TileB, class Tile>
__device__ inline void cp_async_gemm(const GemmArgs& g, float* smem, Tile& t, int row0, int col0) {
  static_assert(!(WALK && DOUBLE_FRAG), "the walk runs each K tile in one step (single fragments)");
  constexpr int kRing = NSTAGES * (TileA::kFloats + TileB::kFloats);
  auto stage = [&]() -> float* {
    if constexpr (!STAGE_C) return nullptr;
    else {
      static_assert(WALK || NT / 32 * Tile::kStageFloats <= kRing, "the staged C tile must fit the operand ring");
      return smem + (WALK ? kRing : 0) + threadIdx.x / 32 * Tile::kStageFloats;
    }
  };
  if constexpr (WALK) {
    cp_async_tile_loop<TILE_M, TILE_N, TILE_K, NT, NSTAGES, GROUP_ROWS, TileA, TileB>(
        g, smem, t, row0, col0,
        [&](long long m0, long long n0) { store_result<Acc, STAGE_C>(g, t, m0, n0, row0, col0, stage()); });
  } else {
    int bm, bn;
    grouped_tile<GROUP_ROWS>(bm, bn);
    const long long m0 = (long long)bm * TILE_M, n0 = (long long)bn * TILE_N;
    int first, count;
    split_run(g, TILE_K, first, count);
    cp_async_mainloop<TILE_M, TILE_N, TILE_K, NT, NSTAGES, DOUBLE_FRAG, TileA, TileB>(g, smem, m0, n0, t, row0, col0,
                                                                                    first, count);
    if constexpr (STAGE_C) __syncthreads();  // every warp is done reading the ring
    store_result<Acc, STAGE_C>(g, t, m0, n0, row0, col0, stage());
  }
}

}  // namespace gl
