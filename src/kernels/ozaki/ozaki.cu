// ozaki: FP32 GEMM by Ozaki scheme II on Hopper's INT8 tensor cores (sm_90a); the arithmetic is
// in ozaki_math.cuh.
//
// Two pre-passes over op(A) and op(B)ᵀ (blockIdx.z picks the operand), then the product:
//   ozaki_scan      each row's 2-norm (its exponent), whether it holds Inf or NaN, and the spread
//                   statistic (rms / geometric mean); its last block chooses the moduli from it
//                   for the whole call (no trip to the host: the choice follows the data, inside a
//                   graph too);
//   ozaki_residues  each element scaled by its row's power of two, rounded, and written as one
//                   int8 residue per modulus, K-major: the planes the tensor cores read;
//   gemm_ozaki      persistent and warp-specialised like wgmma: the producer warpgroup moves the
//                   residue tiles of every modulus in turn with TMA (128-byte rows, swizzled; in a
//                   cluster of CLUSTER_M x CLUSTER_N blocks, each loads a share of the A tile its
//                   row of blocks needs and of the B tile its column needs, multicast); the
//                   consumers run one exact INT32 product per modulus (m64nBNk32 s8 wgmmas), fold
//                   it into the tile's 64-bit fixed-point sum of CRT fractions (integer multiplies
//                   only), and after the last modulus rebuild, scale and store C. Elements whose
//                   row or column holds Inf or NaN are summed again in FP32 (cuBLAS's pattern).
#include "gemm_tile.cuh"
#include "hopper.cuh"
#include "ozaki_math.cuh"

#ifndef GROUP
#define GROUP 8
#endif
#ifndef MODULI
#define MODULI 0  // 0: chosen from the data (ozaki::choose_moduli)
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1  // blocks of a cluster along M (they share B tiles)
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1  // along N (they share A tiles)
#endif

constexpr int BK = 128;  // int8 values per K tile row: one 128-byte swizzle row
constexpr int NT = 128 * (CONSUMERS + 1);
constexpr int WG_M = BM / CONSUMERS;
constexpr int MW = WG_M / 64;
constexpr int STAGE = (BM + BN) * BK;  // bytes
constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
constexpr int CLUSTER = CLUSTER_M * CLUSTER_N;
static_assert(WG_M % 64 == 0, "each consumer warpgroup owns whole m64 rows");

// blockIdx.z picks the operand. The passes take their parameters as __grid_constant__: a reference
// into a plain by-value parameter made every thread copy it to its stack (120-192 bytes of local
// memory written per thread: 1.6 GB of the residue pass's DRAM writes at 8192³, perf-log 48).
__device__ inline const ozaki::PassOperand& operand(const ozaki::PassArgs& p) { return blockIdx.z ? p.op[1] : p.op[0]; }

// One operand's 32 x 32 tile at (r0, c0) into shared memory, read along whichever of its
// dimensions is contiguous (coalesced either way); zero outside the matrix.
__device__ inline void load_tile(float (&tile)[32][33], const ozaki::PassOperand& x, long long k, long long r0,
                                 long long c0) {
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const bool k_contig = x.sk == 1;
#pragma unroll
  for (int i = ty; i < 32; i += 8) {
    const int r = k_contig ? i : tx, c = k_contig ? tx : i;
    const long long gr = r0 + r, gc = c0 + c;
    tile[r][c] = gr < x.rows && gc < k ? x.x[gr * x.sr + gc * x.sk] : 0.0f;
  }
}

// Whether an operand's rows start on 16 bytes along a contiguous K (16-byte loads; a run-time test,
// one branch for the whole grid, so that an operand's alignment never changes the binary).
__device__ inline bool rows_of_float4(const ozaki::PassOperand& x) {
  return x.sk == 1 && ((reinterpret_cast<unsigned long long>(x.x) | (unsigned long long)(x.sr * 4)) & 15) == 0;
}
// Four elements of a K-contiguous row from column c (zero past K), 16 bytes at once where whole.
__device__ inline void load_run4(float* v, const float* row, long long c, long long k) {
  if (c + 4 <= k) {
    const float4 f = __ldg(reinterpret_cast<const float4*>(row + c));
    v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
  } else {
#pragma unroll
    for (int t = 0; t < 4; ++t) v[t] = c + t < k ? __ldg(row + c + t) : 0.0f;
  }
}

// Positive floats order like their bits.
__device__ inline void atomic_max_positive(unsigned* where, float v) { atomicMax(where, __float_as_uint(v)); }

// The scan's last block: the moduli for the whole call (fixed, or from the spread of both operands
// at this K and M x N) and whether its CRT steps reduce, once, for every later block to read.
__device__ inline void choose_for_the_call(const ozaki::PassArgs& p) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // this block's exponents and spread before its count
    last = atomicAdd(&p.info->done, 1u) == gridDim.x * gridDim.z - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const unsigned seen[2] = {atomicOr(&p.info->spread[0], 0u), atomicOr(&p.info->spread[1], 0u)};  // from L2
  const ozaki::Spread s = ozaki::spread_of(seen);
  const long long m = p.op[0].rows, n = p.op[1].rows;
  const int moduli = MODULI > 0 ? MODULI : ozaki::choose_moduli(s, p.k, m, n);
  if (threadIdx.x == 0) p.info->moduli = moduli, p.info->reduce = ozaki::crt_reduces(moduli, s, p.k, m, n);
}

// A row's sums over the lanes of a warp that hold parts of it: the lanes `from`, 2·`from`, ... apart
// (xor shuffles: every lane of the group ends with the group's sums, in a fixed order).
__device__ inline void sum_across_lanes(ozaki::RowSums& s, int from) {
  for (int d = from; d < 32; d *= 2) {
    s.squares += __shfl_xor_sync(~0u, s.squares, d);
    s.logs += __shfl_xor_sync(~0u, s.logs, d);
    s.nonzero += __shfl_xor_sync(~0u, s.nonzero, d);
    s.finite = __shfl_xor_sync(~0u, int(s.finite), d) && s.finite;
  }
}

// Row g's exponent from its sums (kNonFinite where it holds Inf or NaN or its sum of squares passes
// float64's range), and its spread into the operand's maximum.
__device__ inline void finish_row(const ozaki::PassArgs& p, const ozaki::PassOperand& x, long long g,
                                  const ozaki::RowSums& s) {
  int e = 0;
  if (!s.finite || !isfinite(s.squares)) {
    e = ozaki::kNonFinite;
  } else if (s.squares > 0) {
    frexp(sqrt(s.squares), &e);  // ||x_row|| < 2^e
    atomic_max_positive(&p.info->spread[blockIdx.z], ozaki::row_spread(s.squares, s.logs, s.nonzero, p.k));
  }
  x.exponent[g] = e;
}

// kScanRows rows per block over all of K, read along whichever dimension is contiguous: a warp per
// row when K is (16-byte loads where the rows start on 16 bytes, else 128 bytes per load), else 32
// columns of the 8 rows per 256 threads (8 · 4-byte pieces: every 32-byte sector used). Many small
// blocks (latency). The lanes' sums meet by shuffles: a warp's row at once where K is contiguous;
// otherwise each warp's four lanes of a row, then the eight warps' sums through shared memory (not
// 32 lanes' sums added one after another by one thread a row: perf-log 130).
extern "C" __global__ void __launch_bounds__(256) ozaki_scan(const __grid_constant__ ozaki::PassArgs p) {
  follow_previous_grid();
  constexpr int kLanes = 32, kUnroll = 8, kWarps = 8;  // threads per row, loads in flight per thread
  static_assert(ozaki::kScanRows * kLanes == 256 && kWarps * 32 == 256, "a block is 256 threads");
  const ozaki::PassOperand& x = operand(p);
  const bool k_contig = x.sk == 1;
  const int row = k_contig ? threadIdx.x / kLanes : threadIdx.x % ozaki::kScanRows;
  const int lane = k_contig ? threadIdx.x % kLanes : threadIdx.x / ozaki::kScanRows;
  const long long gr = (long long)blockIdx.x * ozaki::kScanRows + row;
  ozaki::RowSums sums;
  // Rows on 16 bytes: each lane four 16-byte loads a step, 2 KB of the row in flight per warp (four
  // times the 4-byte loads': those held the pass at a third of the memory rate, perf-log 111).
  if (gr < x.rows && rows_of_float4(x)) {
    const float* r = x.x + gr * x.sr;
    for (long long c0 = 4 * lane; c0 < p.k; c0 += 4 * kLanes * 4) {
      float v[2][kUnroll];
#pragma unroll
      for (int u = 0; u < 4; ++u) load_run4(&v[u / 2][u % 2 * 4], r, c0 + 4 * kLanes * u, p.k);
#pragma unroll
      for (int u = 0; u < 2 * kUnroll; ++u) v[u / kUnroll][u % kUnroll] = fabsf(v[u / kUnroll][u % kUnroll]);
      ozaki::add_chunk(sums, v[0]);
      ozaki::add_chunk(sums, v[1]);
    }
  } else if (gr < x.rows)
    for (long long c0 = lane; c0 < p.k; c0 += kLanes * kUnroll) {
      float v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long c = c0 + kLanes * u;
        v[u] = c < p.k ? fabsf(x.x[gr * x.sr + c * x.sk]) : 0.0f;
      }
      ozaki::add_chunk(sums, v);
    }
  if (k_contig) {
    sum_across_lanes(sums, 1);
    if (lane == 0 && gr < x.rows) finish_row(p, x, gr, sums);
  } else {
    // Lanes 8 and 16 apart in a warp hold the same row.
    __shared__ double part_squares[kWarps][ozaki::kScanRows], part_logs[kWarps][ozaki::kScanRows];
    __shared__ int part_nonzero[kWarps][ozaki::kScanRows], part_finite[kWarps][ozaki::kScanRows];
    sum_across_lanes(sums, ozaki::kScanRows);
    const int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 < ozaki::kScanRows) {
      part_squares[warp][row] = sums.squares, part_logs[warp][row] = sums.logs;
      part_nonzero[warp][row] = sums.nonzero, part_finite[warp][row] = sums.finite;
    }
    __syncthreads();
    if (threadIdx.x < ozaki::kScanRows && gr < x.rows) {
      ozaki::RowSums all;
      for (int w = 0; w < kWarps; ++w) {
        all.squares += part_squares[w][row], all.logs += part_logs[w][row];
        all.nonzero += part_nonzero[w][row], all.finite = all.finite && part_finite[w][row];
      }
      finish_row(p, x, gr, all);
    }
  }
  choose_for_the_call(p);
}

// Sixteen scaled integers' residues, one 16-byte store per plane. The moduli loop is unrolled so
// that each modulus is a constant (a multiply, not a division).
template <class Int>
__device__ inline void write_residues(const long long (&v)[16], int n, signed char* out, long long plane) {
#pragma unroll
  for (int l = 0; l < ozaki::kMaxModuli; ++l) {
    if (l >= n) return;
    unsigned word[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 16; ++i)
      word[i / 4] |= unsigned(ozaki::symmetric_residue(Int(v[i]), ozaki::modulus(l)) & 0xff) << (8 * (i % 4));
    *reinterpret_cast<uint4*>(out + l * plane) = make_uint4(word[0], word[1], word[2], word[3]);
  }
}

// The same from sixteen scaled values exact in FP32 (ozaki::split16: q <= kMaxInt32Bits), on the
// FP32 pipe.
__device__ inline void write_residues_fp32(const float (&x)[16], int n, signed char* out, long long plane) {
  ozaki::Split16 s[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) s[i] = ozaki::split16(x[i]);
#pragma unroll
  for (int l = 0; l < ozaki::kMaxModuli; ++l) {
    if (l >= n) return;
    unsigned word[4];
#pragma unroll
    for (int w = 0; w < 4; ++w)
      word[w] = ozaki::pack_bytes(ozaki::residue_byte(s[4 * w], l), ozaki::residue_byte(s[4 * w + 1], l),
                                  ozaki::residue_byte(s[4 * w + 2], l), ozaki::residue_byte(s[4 * w + 3], l));
    *reinterpret_cast<uint4*>(out + l * plane) = make_uint4(word[0], word[1], word[2], word[3]);
  }
}

// 32 rows x kResidueColumns (128) per block: whole 128-byte lines of every plane (a line written in
// pieces by different blocks reaches the memory as partial writes). Thread (row t / 8, t % 8)
// converts 16 consecutive elements of its row.
extern "C" __global__ void __launch_bounds__(256) ozaki_residues(const __grid_constant__ ozaki::PassArgs p) {
  follow_previous_grid();
  constexpr int kTiles = ozaki::kResidueColumns / 32;
  __shared__ float tile[kTiles][32][33];
  const ozaki::PassOperand& x = operand(p);
  const long long r0 = (long long)blockIdx.y * 32, c0 = (long long)blockIdx.x * ozaki::kResidueColumns;
  if (r0 >= x.rows) return;
  const int n = p.info->moduli;
  const int row = threadIdx.x / 8, c = threadIdx.x % 8 * 16;
  const long long gr = r0 + row;
  // A thread's 16 elements: read straight from rows on 16 bytes along K (four 16-byte loads in
  // flight, no barrier), else through the block's transposing tiles.
  float elements[16];
  if (rows_of_float4(x)) {
    if (gr >= x.rows) return;
#pragma unroll
    for (int u = 0; u < 4; ++u) load_run4(&elements[4 * u], x.x + gr * x.sr, c0 + c + 4 * u, p.k);
  } else {
#pragma unroll
    for (int t = 0; t < kTiles; ++t) load_tile(tile[t], x, p.k, r0, c0 + 32 * t);
    __syncthreads();
    if (gr >= x.rows) return;
#pragma unroll
    for (int i = 0; i < 16; ++i) elements[i] = tile[c / 32][row][c % 32 + i];
  }
  const ozaki::Bits bits = ozaki::bits(n);
  const int q = blockIdx.z ? bits.b : bits.a, e = x.exponent[gr];
  signed char* out = x.planes + gr * p.kp + c0 + c;
  // Element v = x · 2^(q - e), rounded: |v| < 2^q. In FP32 where 2^(q - e) is a normal float (x ·
  // 2^(q - e) is then exact, or below 2^-126 where it rounds to 0 either way).
  const int shift = q - e;
  if (e != ozaki::kNonFinite && q <= ozaki::kMaxInt32Bits && shift >= -126 && shift <= 127) {
    const float scale = __int_as_float((127 + shift) << 23);
    float scaled[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) scaled[i] = elements[i] * scale;
    write_residues_fp32(scaled, n, out, x.rows * p.kp);
    return;
  }
  long long v[16];
#pragma unroll
  for (int i = 0; i < 16; ++i)
    v[i] = e == ozaki::kNonFinite ? 0 : ozaki::scaled_integer(elements[i], shift);
  if (q <= ozaki::kMaxInt32Bits)
    write_residues<int>(v, n, out, x.rows * p.kp);
  else
    write_residues<long long>(v, n, out, x.rows * p.kp);
}

// The blocks of a cluster that read the same A tile (one row of the cluster: same rank % CLUSTER_M)
// or the same B tile (same rank / CLUSTER_M), as a multicast mask.
__device__ inline unsigned short row_mask(int rm) {
  unsigned m = 0;
  for (int j = 0; j < CLUSTER_N; ++j) m |= 1u << (rm + CLUSTER_M * j);
  return (unsigned short)m;
}
__device__ inline unsigned short column_mask(int rn) { return (unsigned short)(((1u << CLUSTER_M) - 1) << (CLUSTER_M * rn)); }

template <class T, int R>
__device__ inline void fence_operands(T (&d)[MW][R]) {
#pragma unroll
  for (int i = 0; i < MW; ++i)
#pragma unroll
    for (int j = 0; j < R; ++j) asm volatile("" : "+r"(d[i][j])::"memory");
}

extern "C" __global__ void __launch_bounds__(NT, 1)
    gemm_ozaki(const __grid_constant__ GemmArgs g, const __grid_constant__ TensorMaps maps) {
  follow_previous_grid();
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  __shared__ ozaki::CrtStep crt[ozaki::kMaxModuli];
  signed char* smem = reinterpret_cast<signed char*>(align_1024(smem_raw));
  unsigned long long* full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE);
  unsigned long long* empty = full + STAGES;
  const int wg = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const auto* info = static_cast<const ozaki::Info*>(g.extra);
  const int n = info->moduli;
  const bool reduce = info->reduce != 0;

  if (threadIdx.x == 0) init_pipeline(full, empty, STAGES, 4 * CONSUMERS * CLUSTER);
  if (threadIdx.x < n) crt[threadIdx.x] = ozaki::crt_step(threadIdx.x, n);
  // With clusters, no block may signal another's barriers before that block initialised them.
  if (CLUSTER > 1) cluster_sync();
  else __syncthreads();

  // Cluster u of the tile order covers CLUSTER_M x CLUSTER_N tiles; block (rm, rn) of it takes one.
  const int rank = CLUSTER > 1 ? int(cluster_rank()) : 0, rm = rank % CLUSTER_M, rn = rank / CLUSTER_M;
  const long long tiles_m = (g.m + BM - 1) / BM, tiles_n = (g.n + BN - 1) / BN;
  const long long units_m = (tiles_m + CLUSTER_M - 1) / CLUSTER_M, units_n = (tiles_n + CLUSTER_N - 1) / CLUSTER_N;
  const long long units = units_m * units_n, first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;
  auto coords = [&](long long u, long long& tm, long long& tn) {
    long long um, un;
    tail::banded_tile(u, units_m, units_n, GROUP, um, un);
    tm = um * CLUSTER_M + rm;
    tn = un * CLUSTER_N + rn;
  };
  const int ktiles = int((g.k + BK - 1) / BK);

  if (wg == CONSUMERS) {  // producer
    if (CONSUMERS == 2) regs_dealloc<PRODUCER_REGS>();
    if (threadIdx.x % 128 == 0) {
      int round_slot = 0;
      for (long long u = first; u < units; u += step) {
        long long tm, tn;
        coords(u, tm, tn);
        for (int l = 0; l < n; ++l)
          for (int kt = 0; kt < ktiles; ++kt, ++round_slot) {
            const int s = round_slot % STAGES;
            mbar_wait(&empty[s], ((round_slot / STAGES) & 1) ^ 1);
            mbar_expect_bytes(&full[s], STAGE);
            signed char* a = smem + s * STAGE;
            signed char* b = a + BM * BK;
            constexpr int A_SHARE = BM / CLUSTER_N, B_SHARE = BN / CLUSTER_M;
            if (CLUSTER_N == 1)
              tma_load_3d(a, &maps.a, kt * BK, int(tm * BM), l, &full[s]);
            else
              tma_load_3d_multicast(a + rn * A_SHARE * BK, &maps.a, kt * BK, int(tm * BM + rn * A_SHARE), l, &full[s],
                                    row_mask(rm));
            if (CLUSTER_M == 1)
              tma_load_3d(b, &maps.b, kt * BK, int(tn * BN), l, &full[s]);
            else
              tma_load_3d_multicast(b + rm * B_SHARE * BK, &maps.b, kt * BK, int(tn * BN + rm * B_SHARE), l, &full[s],
                                    column_mask(rn));
          }
      }
    }
  } else {
    if (CONSUMERS == 2) regs_alloc<CONSUMER_REGS>();
    const ozaki::Bits bits = ozaki::bits(n);
    double modulus_product = 1;
    for (int l = 0; l < n; ++l) modulus_product *= ozaki::modulus(l);
    // ozaki::rebuild's M · 2^-(qa + qb).
    const double scale = ldexp(modulus_product, -(bits.a + bits.b));
    const int* exp_a = info->exponent;
    const int* exp_b = info->exponent + g.m;
    // C's rows take 8-byte stores of column pairs where its start and row pitch allow them.
    const bool c_pairs =
        g.c_col == 1 && ((reinterpret_cast<unsigned long long>(g.c) | (unsigned long long)(g.c_row * 4)) & 7) == 0;
    int round_slot = 0;
    for (long long u = first; u < units; u += step) {
      long long tm, tn;
      coords(u, tm, tn);
      unsigned long long fraction[MW][BN / 2];  // X / M, fixed point (ozaki::crt_accumulate)
#pragma unroll
      for (int i = 0; i < MW; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) fraction[i][j] = 0;
      for (int l = 0; l < n; ++l) {
        int acc[MW][BN / 2];
        int held = -1;  // the slot the group in flight reads
        for (int kt = 0; kt < ktiles; ++kt, ++round_slot) {
          const int s = round_slot % STAGES;
          mbar_wait(&full[s], (round_slot / STAGES) & 1);
          const signed char* a = smem + s * STAGE + wg * WG_M * BK;
          const signed char* b = smem + s * STAGE + BM * BK;
          fence_operands(acc);
          wgmma_fence();
#pragma unroll
          for (int k = 0; k < BK; k += 32)
#pragma unroll
            for (int i = 0; i < MW; ++i)
              wgmma_s8(acc[i], kmajor_swizzled_desc<128>(a + i * 64 * BK + k), kmajor_swizzled_desc<128>(b + k),
                       kt > 0 || k > 0);
          wgmma_commit();
          wgmma_wait<1>();  // the previous K tile's group is done: its slot goes back
          if (held >= 0) release_slot<CLUSTER>(held, lane, empty);
          held = s;
        }
        wgmma_wait<0>();
        if (held >= 0) release_slot<CLUSTER>(held, lane, empty);
        fence_operands(acc);
        const ozaki::CrtStep step = crt[l];
        // The products reduced in place where the call needs it (ozaki::crt_reduces), then added:
        // two loops over the accumulators, where a branch between two whole CRT steps spilled.
        if (reduce) {
#pragma unroll
          for (int i = 0; i < MW; ++i)
#pragma unroll
            for (int j = 0; j < BN / 2; ++j) acc[i][j] = ozaki::reduce_product(acc[i][j], step);
        }
#pragma unroll
        for (int i = 0; i < MW; ++i)
#pragma unroll
          for (int j = 0; j < BN / 2; ++j) fraction[i][j] = ozaki::crt_add(fraction[i][j], acc[i][j], step);
      }
      const long long r0 = tm * BM + wg * WG_M, c0 = tn * BN;
      // The exponents of the thread's rows (two per m64 block) and of the tile's columns (spread over
      // the warp, QuadColumns), before any element: loaded beside each element, behind its branches
      // and after the previous stores (which may alias them), they were one load in flight at a time
      // (perf-log 118). (Every column's in each thread spilled: the sums hold 128 registers.)
      hopper::QuadColumns<BN> col_exp;
      col_exp.load(lane, [&](int c) { return c0 + c < g.n ? exp_b[c0 + c] : 0; });
      int row_exp[MW][2];
      const long long row = r0 + warp * 16 + lane / 4;
#pragma unroll
      for (int i = 0; i < MW; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long r = row + 64 * i + 8 * h;
          row_exp[i][h] = r < g.m ? __ldg(exp_a + r) : 0;
        }
      // The common tile: wholly inside C, every row and column finite, pairs storable, beta 0. Its
      // stores need no test, so the quads' rebuilds issue back to back (with a branch around each
      // pair's store, one pair's conversions were in flight at a time).
      bool plain = r0 + WG_M <= g.m && c0 + BN <= g.n && c_pairs && g.beta == 0.0f && !ABLATE_NO_STORE;
#pragma unroll
      for (int i = 0; i < MW; ++i) plain &= row_exp[i][0] != ozaki::kNonFinite && row_exp[i][1] != ozaki::kNonFinite;
#pragma unroll
      for (int k = 0; k < quad::registers(BN); ++k) plain &= col_exp.v[k] != ozaki::kNonFinite;
      if (__all_sync(0xffffffffu, plain)) {
        each_quad_at(fraction, r0, c0, warp, lane,
                     [&](int i, int j, long long r, long long c, const unsigned long long* f) {
                       int ec[2];
                       col_exp.of_quad(j, lane, ec);
#pragma unroll
                       for (int h = 0; h < 2; ++h) {
                         const int e = row_exp[i][h];
                         const float2 v = {g.alpha * float(ozaki::rebuild(f[2 * h], scale, e + ec[0])),
                                           g.alpha * float(ozaki::rebuild(f[2 * h + 1], scale, e + ec[1]))};
                         *reinterpret_cast<float2*>(g.c + (r + 8 * h) * g.c_row + c) = v;
                       }
                     });
        continue;
      }
      bool nonfinite = false;
      // A pair of adjacent columns of a row in one store where both are finite (C's rows allowing).
      auto store_pair = [&](long long r, long long c, int er, const int (&ec)[2], unsigned long long f0,
                            unsigned long long f1) {
        const bool finite[2] = {er != ozaki::kNonFinite && ec[0] != ozaki::kNonFinite,
                                er != ozaki::kNonFinite && ec[1] != ozaki::kNonFinite};
        // Rebuilt before the test (no branch between them); a non-finite row's or column's marker
        // would overflow a signed sum, so the exponents add as unsigned (the value is not stored).
        const int e[2] = {int(unsigned(er) + unsigned(ec[0])), int(unsigned(er) + unsigned(ec[1]))};
        const float v[2] = {float(ozaki::rebuild(f0, scale, e[0])), float(ozaki::rebuild(f1, scale, e[1]))};
        if (finite[0] && finite[1]) return gl::store_c_run<2>(g, r, c, v, c_pairs);
        nonfinite = true;
        if (finite[0]) gl::store_c(g, r, c, v[0]);
        if (finite[1]) gl::store_c(g, r, c + 1, v[1]);
      };
      each_quad_at(fraction, r0, c0, warp, lane,
                   [&](int i, int j, long long r, long long c, const unsigned long long* f) {
                     int ec[2];
                     col_exp.of_quad(j, lane, ec);
                     store_pair(r, c, row_exp[i][0], ec, f[0], f[1]);
                     store_pair(r + 8, c, row_exp[i][1], ec, f[2], f[3]);
                   });
      // Elements whose row or column holds Inf or NaN are summed again in FP32 (cuBLAS's pattern), in
      // a pass of their own: inlined at every element, that loop cost the finite tiles a fifth of
      // their time (branches around each store); calling it out of line slowed the K loop.
      if (__any_sync(0xffffffffu, nonfinite))
        each_element(fraction, r0, c0, warp, lane, [&](long long r, long long c, unsigned long long) {
          if (r < g.m && c < g.n && (exp_a[r] == ozaki::kNonFinite || exp_b[c] == ozaki::kNonFinite))
            gl::store_c(g, r, c, gl::fp32_dot(g, r, c));
        });
    }
  }
  // No block leaves while another may still write into its shared memory or arrive on its barriers.
  if (CLUSTER > 1) cluster_sync();
}
